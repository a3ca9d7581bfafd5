import Foundation
import LabTestSupport
import SyncProtocol
import Testing
@testable import Launcher

/// Real runs of the short lessons (topologies/lessons/, docs/LESSONS.md): each runs the lab's design beside a broken
/// one, and the broken half must fail exactly the invariants its `expect` names while the correct half passes. The
/// lesson runs here without its `expect` line, so the verdict is the bare checks'; every failing check's detail must
/// name a device or account the lesson expects to break, never the correct half.
@Suite(.serialized) struct LessonTests {
    static var lessons: URL { EndToEndTests.topologies.appendingPathComponent("lessons") }

    /// The lesson's `expect` block (device or account → invariant names) and, for each of its keys, the names a
    /// failure may give: the device itself, or the account and its devices.
    static func expectation(of lesson: String) throws -> (expect: [String: [String]], names: [String: [String]]) {
        let text = try String(contentsOf: lessons.appendingPathComponent("\(lesson).json5"), encoding: .utf8)
        let root = try JSON5Parser.parse(text)
        func strings(_ node: JSON5Node?) -> [String] {
            guard case .array(let items)? = node?.value else { return [] }
            return items.compactMap { if case .string(let s) = $0.value { return s } else { return nil } }
        }
        func string(_ node: JSON5Node?) -> String? { if case .string(let s)? = node?.value { return s } else { return nil } }
        var devicesOf: [String: [String]] = [:]
        if case .array(let accounts)? = root["accounts"]?.value {
            for account in accounts {
                guard let id = string(account["id"]), case .array(let devices)? = account["devices"]?.value else { continue }
                devicesOf[id] = devices.compactMap { string($0["id"]) }
            }
        }
        guard case .object(let pairs)? = root["expect"]?.value else { return ([:], [:]) }
        var expect: [String: [String]] = [:]
        var names: [String: [String]] = [:]
        for (key, node) in pairs {
            expect[key] = strings(node)
            names[key] = [key] + (devicesOf[key] ?? [])
        }
        return (expect, names)
    }

    /// Runs the lesson with its `expect` line removed, into a fresh folder.
    static func runBare(_ lesson: String) throws -> EndToEndTests.Run {
        let text = try String(contentsOf: lessons.appendingPathComponent("\(lesson).json5"), encoding: .utf8)
        let bare = text.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.hasPrefix("  expect:") }.joined(separator: "\n")
        let home = TempFolder()
        let path = home.file("\(lesson).json5")
        try bare.write(toFile: path, atomically: true, encoding: .utf8)
        return try EndToEndTests.run(file: path, in: home)
    }

    @Test(arguments: ["intent-persisted-first", "idempotency-keys", "cursor-after-commit", "cursor-after-commit-crash",
                      "hints-carry-no-data", "server-idempotency", "reply-after-commit"])
    func theBrokenHalfFailsExactlyWhatItsLessonExpects(_ lesson: String) throws {
        let (expected, names) = try Self.expectation(of: lesson)
        #expect(!expected.isEmpty, "\(lesson) expects nothing to break")
        let run = try Self.runBare(lesson)
        defer { EndToEndTests.expectNoneLeft(run) }
        #expect(run.status == 1, "\(lesson): \(run.output)")
        let failed = (run.report["invariants"]?.arrayValue ?? []).filter { $0["held"]?.boolValue != true }
        let failedNames = Set(failed.compactMap { $0["name"]?.stringValue })
        #expect(failedNames == Set(expected.values.flatMap { $0 }), "\(lesson): \(run.failedInvariants)")
        for item in failed {
            let detail = item["detail"]?.stringValue ?? ""
            #expect(names.values.joined().contains { detail.contains($0) },
                    "\(lesson): a failure names no broken half: \(detail)")
        }
    }
}
