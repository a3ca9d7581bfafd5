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

/// No emitter in Sources writes an event type the catalogue does not declare: every `EventLine(.x` names a catalogue
/// member, and every string literal still handed to an `emit(…)` is a catalogue name.
struct EventEmitterTests {
    static let sources: [(path: String, text: String)] = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources")
        let walker = FileManager.default.enumerator(atPath: root.path)
        var out: [(String, String)] = []
        while let path = walker?.nextObject() as? String {
            guard path.hasSuffix(".swift"), !path.contains("EventCatalogue") else { continue }
            out.append((path, (try? String(contentsOfFile: root.path + "/" + path, encoding: .utf8)) ?? ""))
        }
        return out
    }()

    /// The event types written as literals: `emit("x.y"`, `emit(name, "x.y"`, `EventLine("x.y"`.
    static func literalTypes(in text: String) -> [String] {
        // A literal followed by `, type, ` is a process name (`log.emit("launcher", type, fields)`), not a type.
        let literal = /(?:emit\((?:[a-z]+, )?|EventLine\()"([a-zA-Z]+(?:\.[a-zA-Z]+)*)"(?!, [a-z]+, )/
        return text.matches(of: literal).map { String($0.1) }
    }

    @Test func everyTypeAnEmitterWritesIsInTheCatalogue() {
        #expect(Self.sources.count > 100)
        var unknown: [String] = []
        for (path, text) in Self.sources {
            for type in Self.literalTypes(in: text) where EventCatalogue.named(type) == nil {
                unknown.append("\(path): \(type)")
            }
        }
        #expect(unknown == [], "event types written outside the catalogue")
        // The instances' events all go through the catalogue now.
        let literalLines = Self.sources.flatMap { source in
            source.text.matches(of: /EventLine\("/).map { _ in source.path }
        }
        #expect(literalLines == [])
        // And every emitter names a catalogue value (`emit(.opApplied, …)`): a literal, even a known one, is not typed.
        let literalEmits = Self.sources.flatMap { source in
            Self.literalTypes(in: source.text).map { "\(source.path): \($0)" }
        }
        #expect(literalEmits == [], "emitters that spell an event type instead of naming its catalogue value")
    }

    /// The catalogue names a reader matches as a literal: `type == "x.y"`, `type != "x.y"`, `case "x.y"` (and the
    /// further literals of that case list), for names the catalogue has.
    static func literalReads(in text: String) -> [String] {
        var out: [String] = []
        for match in text.matches(of: /type\s*[!=]=\s*"([a-zA-Z]+(?:\.[a-zA-Z]+)*)"/) { out.append(String(match.1)) }
        for match in text.matches(of: /\n\s*case ("[^\n]*?)(?: where |:)/) {
            out += match.1.matches(of: /"([a-zA-Z]+(?:\.[a-zA-Z]+)*)"/).map { String($0.1) }
        }
        return out.filter { EventCatalogue.named($0) != nil }
    }

    /// The launcher's analysis and report match catalogue values (`case EventCatalogue.opApplied:`), not names of
    /// their own.
    @Test func everyReaderMatchesCatalogueValues() {
        let launcher = Self.sources.filter { $0.path.hasPrefix("Launcher/") }
        #expect(launcher.count > 50)
        let literal = launcher.flatMap { source in Self.literalReads(in: source.text).map { "\(source.path): \($0)" } }
        #expect(literal == [], "readers that match an event type by its spelled name")
    }

    @Test func aLiteralReadIsSeen() {
        let text = """
            if e.type == "op.applied" || e.type != "hint.held" { }
            switch e.type {
            case "op.sent", "op.result" where e.proc == "a": break
            case EventCatalogue.opSaved: break
            case "not.anEvent": break
            }
            """
        #expect(Self.literalReads(in: "\n" + text) == ["op.applied", "hint.held", "op.sent", "op.result"])
    }

    @Test func aLiteralTypeIsSeen() {
        let text = #"log.emit("phase", []); io.emit(name, "op.sent", x); EventLine("a.b"); emit("launcher", type, f)"#
        #expect(Self.literalTypes(in: text) == ["phase", "op.sent", "a.b"])
    }
}
