import Foundation
import LabKit
import SQLite
import SyncProtocol
@testable import Launcher

/// A hand-made run folder: one account "acme" with devices "a" and "b", one edit made on "a" and applied on both,
/// a hint delivered to "b". Each test breaks one thing and checks that the matching invariant fails.
struct RunFixture {
    let folder: RunFolder
    var events: [String] = []
    var changes: [(seq: Int, draft: String, key: String, origin: String)] = [(1, "d1", "k1", "a")]
    var serverDrafts: [(id: String, title: String, body: String, version: Int)] = [("d1", "T", "B", 1)]
    var deviceOps: [String: [(key: String, status: String, error: String)]] = ["a": [("k1", "completed", "")], "b": []]
    var deviceDrafts: [String: [(id: String, title: String, body: String, version: Int)]] = [
        "a": [("d1", "T", "B", 1)], "b": [("d1", "T", "B", 1)],
    ]
    var cursors: [String: Int] = ["a": 1, "b": 1]
    var brokerHeld = 0

    init() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("synclab-fixture-\(UUID().uuidString)").path
        folder = RunFolder(root: root)
        try FileManager.default.createDirectory(atPath: folder.path("devices"), withIntermediateDirectories: true)
        events = [
            event(1, "broker", "process.started", #""role":"broker""#),
            event(2, "a", "op.saved", #""key":"k1","draft":"d1","action":"create","account":"acme","base":0"#),
            event(3, "server", "op.applied", #""device":"a","account":"acme","key":"k1","seq":1,"draft":"d1","action":"create","version":1,"conflict":false"#),
            event(4, "broker", "hint.accepted", #""hint":"h-1","device":"b","account":"acme","head":1,"origin":"a","seqs":[1]"#),
            event(5, "broker", "hint.delivered", #""hint":"h-1","device":"b","head":1"#),
            event(6, "b", "hint.received", #""hint":"h-1","head":1,"keys":["account","head","hint"]"#),
            event(7, "b", "pass.start", #""pass":1,"trigger":"push""#),
            event(8, "b", "change.applied", #""seq":1,"key":"k1","origin":"a","draft":"d1","pass":1,"trigger":"push""#),
            event(9, "b", "cursor.moved", #""from":0,"to":1,"pass":1"#),
            event(10, "b", "pass.end", #""pass":1,"trigger":"push","sent":0,"pulled":1,"cursor":1,"cutOff":false"#),
            event(11, "a", "pass.start", #""pass":1,"trigger":"local-edit""#),
            event(12, "a", "change.applied", #""seq":1,"key":"k1","origin":"a","draft":"d1","pass":1,"trigger":"local-edit""#),
            event(13, "a", "cursor.moved", #""from":0,"to":1,"pass":1"#),
            event(14, "a", "pass.end", #""pass":1,"trigger":"local-edit","sent":1,"pulled":1,"cursor":1,"cutOff":false"#),
        ]
    }

    func event(_ t: Int, _ proc: String, _ type: String, _ fields: String) -> String {
        "{\"wall\":\(1_000_000 + t * 1000),\"sim\":\(t),\"proc\":\"\(proc)\",\"type\":\"\(type)\",\(fields)}"
    }

    /// Writes the folder and returns the report on it.
    func report() throws -> Report {
        let fm = FileManager.default
        folder.write("topology.json5", """
            { name: "fixture", seed: 3, timeScale: 60, duration: "10m",
              accounts: [{ id: "acme", devices: [{ id: "a", platform: "android" }, { id: "b", platform: "ios" }] }] }
            """)
        folder.write("run.json", #"{"seed":3,"timeScale":60,"duration":600}"#)
        folder.write("events.jsonl", events.joined(separator: "\n") + "\n")
        folder.write("stats.json", #"{"broker":{"held":\#(brokerHeld)}}"#)
        for name in ["server.sqlite", "devices/a.sqlite", "devices/b.sqlite"] { try? fm.removeItem(atPath: folder.path(name)) }
        let server = try Database(path: folder.path("server.sqlite"))
        try server.execute("""
            CREATE TABLE changes(account TEXT, seq INTEGER, draft TEXT, op_key TEXT, origin TEXT, conflict INTEGER);
            CREATE TABLE drafts(account TEXT, id TEXT, title TEXT, body TEXT, version INTEGER, deleted INTEGER);
            """)
        for c in changes {
            try server.run("INSERT INTO changes VALUES ('acme', ?, ?, ?, ?, 0)", c.seq, c.draft, c.key, c.origin)
        }
        for d in serverDrafts {
            try server.run("INSERT INTO drafts VALUES ('acme', ?, ?, ?, ?, 0)", d.id, d.title, d.body, d.version)
        }
        for device in ["a", "b"] {
            let db = try Database(path: folder.devicePath(device))
            try db.execute("""
                CREATE TABLE ops(key TEXT PRIMARY KEY, local_seq INTEGER, status TEXT, attempts INTEGER, last_error TEXT);
                CREATE TABLE drafts(id TEXT PRIMARY KEY, title TEXT, body TEXT, version INTEGER, deleted INTEGER);
                CREATE TABLE state(key TEXT PRIMARY KEY, value);
                """)
            for (index, op) in (deviceOps[device] ?? []).enumerated() {
                try db.run("INSERT INTO ops VALUES (?, ?, ?, 1, ?)", op.key, index, op.status, op.error)
            }
            for d in deviceDrafts[device] ?? [] {
                try db.run("INSERT INTO drafts VALUES (?, ?, ?, ?, 0)", d.id, d.title, d.body, d.version)
            }
            try db.run("INSERT INTO state VALUES ('cursor', ?)", cursors[device] ?? 0)
        }
        return try Report.make(folder: folder)
    }

    func remove() { try? FileManager.default.removeItem(atPath: folder.root) }
}

extension Report {
    func invariant(_ name: String) -> InvariantResult? { invariants.first { $0.name == name } }
}
