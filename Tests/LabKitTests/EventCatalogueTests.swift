import Foundation
import LabKit
import Testing

/// The event catalogue and docs/ARCHITECTURE.md's events table list the same event types, each once.
struct EventCatalogueTests {
    static let doc: String = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return (try? String(contentsOf: root.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)) ?? ""
    }()

    /// The names of the first column of the events table (`| type | from | fields |`).
    static func documented(in doc: String) -> [String] {
        guard let table = doc.components(separatedBy: "| type | from | fields |").dropFirst().first else { return [] }
        let rows = table.split(separator: "\n").dropFirst().prefix { $0.hasPrefix("|") }
        return rows.flatMap { row -> [String] in
            let first = row.split(separator: "|", omittingEmptySubsequences: true).first ?? ""
            return first.matches(of: /`([^`]+)`/).map { String($0.1) }
        }
    }

    @Test func everyCatalogueEventIsInTheDocsTableAndViceVersa() {
        let documented = Self.documented(in: Self.doc)
        #expect(documented.count > 90)
        let names = EventCatalogue.all.map(\.name)
        #expect(Set(names).subtracting(documented).sorted() == [], "in the catalogue, not in ARCHITECTURE.md")
        #expect(Set(documented).subtracting(names).sorted() == [], "in ARCHITECTURE.md, not in the catalogue")
    }

    @Test func eachEventOnceWithItsOwnFieldsAndRolesAndAMeaning() {
        let names = EventCatalogue.all.map(\.name)
        #expect(Set(names).count == names.count)
        for event in EventCatalogue.all {
            #expect(Set(event.fields.map(\.name)).count == event.fields.count, "\(event)")
            #expect(!event.roles.isEmpty && !event.meaning.isEmpty, "\(event)")
            #expect(EventCatalogue.named(event.name) == event)
        }
        // The names and fields old run folders hold, kept byte for byte.
        #expect(EventCatalogue.opApplied.name == "op.applied")
        #expect(EventCatalogue.opApplied.fields.map(\.name) == [
            "device", "account", "key", "seq", "draft", "action", "version", "conflict",
        ])
        #expect(EventCatalogue.opApplied.fields.first { $0.name == "seq" }?.kind == .integer)
        #expect(EventCatalogue.processStarted.roles == [.server, .broker, .device])
    }

    @Test func aTypeMissingFromEitherSideIsSeen() {
        let trimmed = Self.doc.replacingOccurrences(of: "| `op.duplicate` |", with: "| op-duplicate |")
        #expect(!Self.documented(in: trimmed).contains("op.duplicate"))
        #expect(Self.documented(in: Self.doc).contains("op.duplicate"))
    }

    @Test func aCatalogueValueMatchesItsTypeInASwitch() {
        func kind(_ type: String) -> String {
            switch type {
            case EventCatalogue.opApplied: return "applied"
            case EventCatalogue.hintDropped: return "dropped"
            default: return "other"
            }
        }
        #expect(kind("op.applied") == "applied" && kind("hint.dropped") == "dropped" && kind("op.saved") == "other")
    }
}
