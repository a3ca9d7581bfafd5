import Foundation
import LabTestSupport
import LabKit
import SQLite
import SyncDevice
import SyncProtocol
import SyncServer
@testable import Launcher

/// A hand-made run folder: one account "acme" with devices "a" and "b", one edit made on "a" and applied on both,
/// a hint delivered to "b". Each test breaks one thing and checks that the matching invariant fails.
struct RunFixture {
    struct Change { var seq: Int; var draft: String; var key: String; var origin: String; var action = "create"
        var title: String? = "T"; var body: String? = "B"; var version = 1 }
    struct Op { var key: String; var status: String; var error: String; var draft = "d1"; var action = "create"
        var attempts = 1 }
    typealias Draft = (id: String, title: String, body: String, version: Int)

    let folder: RunFolder
    /// Holds `folder` until the last copy of the fixture is released.
    private let home = TempFolder()
    var events: [String] = []
    var changes: [Change] = [Change(seq: 1, draft: "d1", key: "k1", origin: "a")]
    /// The server's idempotency records beyond those of the changes (e.g. a rejection): key → (device, outcome).
    var keyRecords: [String: (device: String, outcome: String, reason: String)] = [:]
    var serverDrafts: [Draft] = [("d1", "T", "B", 1)]
    var deviceOps: [String: [Op]] = ["a": [Op(key: "k1", status: "completed", error: "")], "b": []]
    var deviceDrafts: [String: [Draft]] = ["a": [("d1", "T", "B", 1)], "b": [("d1", "T", "B", 1)]]
    /// The shadow of each device; nil: the same as its replica.
    var shadows: [String: [Draft]] = [:]
    var cursors: [String: Int] = ["a": 1, "b": 1]
    var brokerHeld = 0
    var brokerCounters: [String: Int]? = nil
    /// Extra top-level topology keys (e.g. `checks: {…},`).
    var topologyExtra = ""
    /// Extra keys of the account (e.g. `host: "h3",`).
    var accountExtra = ""
    /// App opens per device: (sim, data age in seconds or nil for never synced).
    var opens: [String: [(sim: Double, age: Double?)]] = [:]

    init() throws {
        folder = RunFolder(root: home.path)
        try FileManager.default.createDirectory(atPath: folder.path("devices"), withIntermediateDirectories: true)
        events = [
            event(1, "broker", "process.started", #""role":"broker""#),
            event(2, "a", "op.saved", #""key":"k1","draft":"d1","action":"create","account":"acme","base":0"#),
            event(3, "server", "op.applied",
                #""device":"a","account":"acme","key":"k1","seq":1,"draft":"d1","action":"create","version":1,"#
                + #""conflict":false"#),
            event(4, "broker", "hint.accepted",
                #""hint":"h-1","device":"b","account":"acme","head":1,"origin":"a","seqs":[1]"#),
            event(5, "broker", "hint.delivered", #""hint":"h-1","device":"b","head":1"#),
            event(6, "b", "hint.received", #""hint":"h-1","head":1,"keys":["account","head","hint"]"#),
            event(7, "b", "pass.start", #""pass":1,"trigger":"push""#),
            event(8, "b", "change.applied", #""seq":1,"key":"k1","origin":"a","draft":"d1","pass":1,"trigger":"push""#),
            event(9, "b", "cursor.moved", #""from":0,"to":1,"pass":1"#),
            event(10, "b", "pass.end", #""pass":1,"trigger":"push","sent":0,"pulled":1,"cursor":1,"cutOff":false"#),
            event(11, "a", "pass.start", #""pass":1,"trigger":"local-edit""#),
            event(12, "a", "change.applied",
                #""seq":1,"key":"k1","origin":"a","draft":"d1","pass":1,"trigger":"local-edit""#),
            event(13, "a", "cursor.moved", #""from":0,"to":1,"pass":1"#),
            event(14, "a", "pass.end",
                #""pass":1,"trigger":"local-edit","sent":1,"pulled":1,"cursor":1,"cutOff":false"#),
        ]
    }

    /// A second change on the server, seq 2: a's update of d1 to v2 under `key`, which both devices applied.
    mutating func addUpdateOfD1(key: String) {
        changes.append(Change(seq: 2, draft: "d1", key: key, origin: "a", action: "update", version: 2))
        serverDrafts = [("d1", "T", "B", 2)]
        deviceDrafts = ["a": [("d1", "T", "B", 2)], "b": [("d1", "T", "B", 2)]]
        moveCursors(to: 2)
    }

    /// Device a's update of d1 to `title` under `key` at `t`, as the user made it: the saved op, the launcher's edit
    /// action (with what a read before it showed, `saw`, when given) and the completed op in a's ledger.
    mutating func addUserUpdateOfD1(_ t: Int, key: String, title: String, saw: String? = nil) {
        events.append(event(t, "a", "op.saved",
            "\"key\":\"\(key)\",\"draft\":\"d1\",\"action\":\"update\",\"account\":\"acme\",\"base\":1"))
        events.append(event(t, "launcher", "scenario.action",
            "\"action\":\"edit\",\"target\":\"a\",\"draft\":\"d1\",\"op\":\"update\",\"title\":\"\(title)\","
                + "\"key\":\"\(key)\"" + (saw.map { ",\"saw\":\($0)" } ?? "")))
        deviceOps["a"]!.append(.init(key: key, status: "completed", error: "", action: "update"))
    }

    /// Sets both devices' cursors and the events that report the moves.
    mutating func moveCursors(to cursor: Int, at t: Int = 19) {
        for device in ["a", "b"] {
            events.append(event(t, device, "cursor.moved",
                "\"from\":\(cursors[device] ?? 0),\"to\":\(cursor),\"pass\":9"))
            cursors[device] = cursor
        }
    }

    func event(_ t: Int, _ proc: String, _ type: String, _ fields: String) -> String {
        "{\"wall\":\(1_000_000 + t * 1000),\"sim\":\(t),\"proc\":\"\(proc)\",\"type\":\"\(type)\",\(fields)}"
    }

    /// An empty pass of `device` (it sent and pulled nothing): its `pass.start` at `t` and its `pass.end` at `end`
    /// (`t` unless given), ending at `cursor` with `outcome` (none written when nil) and `durationSec` when given.
    func emptyPass(_ t: Int, _ device: String, pass: Int, trigger: String, end: Int? = nil, cursor: Int = 1,
                   outcome: String? = "completed", durationSec: String? = nil) -> [String] {
        let outcomeField = outcome.map { ",\"outcome\":\"\($0)\"" } ?? ""
        let durationField = durationSec.map { ",\"durationSec\":\($0)" } ?? ""
        return [
            event(t, device, "pass.start", "\"pass\":\(pass),\"trigger\":\"\(trigger)\""),
            event(end ?? t, device, "pass.end", "\"pass\":\(pass),\"trigger\":\"\(trigger)\",\"sent\":0,\"pulled\":0,"
                + "\"cursor\":\(cursor),\"cutOff\":false\(outcomeField)\(durationField)"),
        ]
    }

    /// Writes the folder and returns the report on it.
    func report() throws -> Report {
        let fm = FileManager.default
        folder.write("topology.json5", """
            { name: "fixture", seed: 3, timeScale: 60, duration: "10m", \(topologyExtra)
              accounts: [{ id: "acme", \(accountExtra)
                devices: [{ id: "a", platform: "android" }, { id: "b", platform: "ios" }] }] }
            """)
        folder.write("run.json", #"{"seed":3,"timeScale":60,"duration":600}"#)
        folder.write("events.jsonl", events.joined(separator: "\n") + "\n")
        let counters = brokerCounters ?? ["held": brokerHeld]
        folder.write("stats.json", "{\"broker\":{\"hints\":{"
            + counters.keys.sorted().map { "\"\($0)\":\(counters[$0]!)" }
            .joined(separator: ",") + "}}}")
        for name in ["server.sqlite", "devices/a.sqlite",
            "devices/b.sqlite"] { try? fm.removeItem(atPath: folder.path(name)) }
        // The real schemas, made by the code that owns them; the rows written by hand.
        let store = try ServerStore(path: folder.path("server.sqlite"), synchronous: .off)
        let server = store.database
        try server.run("INSERT INTO accounts(id, head) VALUES ('acme', ?)", changes.map(\.seq).max() ?? 0)
        for device in ["a", "b"] {
            try server.run("INSERT INTO devices(id, account, platform, token) VALUES (?, 'acme', 'android', 't')",
                device)
        }
        for c in changes {
            try server.run("INSERT INTO changes VALUES ('acme', ?, ?, ?, ?, ?, ?, ?, ?, 0)", c.seq, c.draft, c.action,
                           c.version, c.title, c.body, c.origin, c.key)
            try server.run("""
                INSERT OR IGNORE INTO applied_ops(key, device, account, outcome, seq, version, conflict)
                VALUES (?, ?, 'acme', 'applied', ?, ?, 0)
                """, c.key, c.origin, c.seq, c.version)
        }
        for (key, record) in keyRecords {
            try server.run("INSERT INTO applied_ops(key, device, account, outcome, reason) VALUES (?, ?, 'acme', ?, ?)",
                           key, record.device, record.outcome, record.reason)
        }
        for d in serverDrafts {
            try server.run("INSERT INTO drafts VALUES ('acme', ?, ?, ?, ?, 'a', 0)", d.id, d.title, d.body, d.version)
        }
        for device in ["a", "b"] {
            let ledger = try Ledger(path: folder.devicePath(device), synchronous: .off)
            let db = ledger.database
            for (index, op) in (deviceOps[device] ?? []).enumerated() {
                try db.run("""
                    INSERT INTO ops(key, local_seq, draft, action, base, status, attempts, last_error, saved_wall)
                    VALUES (?, ?, ?, ?, 0, ?, ?, ?, 1000000)
                    """, op.key, index + 1, op.draft, op.action, op.status, op.attempts,
                    op.error.isEmpty ? nil : op.error)
            }
            for d in deviceDrafts[device] ?? [] {
                try db.run("INSERT INTO drafts VALUES (?, ?, ?, ?, 0)", d.id, d.title, d.body, d.version)
            }
            for d in shadows[device] ?? deviceDrafts[device] ?? [] {
                try db.run("INSERT INTO shadow VALUES (?, ?, ?, ?, 0)", d.id, d.title, d.body, d.version)
            }
            try db.run("UPDATE state SET value = ? WHERE key = 'cursor'", cursors[device] ?? 0)
            for open in opens[device] ?? [] {
                try db.run("INSERT INTO opens(sim, data_age_sec) VALUES (?, ?)", open.sim, open.age)
            }
        }
        return try Report.make(folder: folder)
    }

    /// Removes the folder now (it goes anyway with the last copy of the fixture).
    func remove() { try? FileManager.default.removeItem(atPath: folder.root) }
}

extension Report {
    func invariant(_ name: String) -> InvariantResult? { invariants.first { $0.name == name } }
}
