import Foundation
import LabControl
import LabKit
import LabTestSupport
import SQLite
import SyncDevice
import SyncProtocol
import Testing
import ZeroMQ

/// A real `synclab-device pool` process holds its devices' ledgers with exclusive locking (docs/DEVICE.md, "Device
/// pool"): nothing else reads them while it runs, `status --db` says why, and a SIGKILL leaves every saved edit in
/// the files for the launcher and for the pool's next start.
@Suite(.serialized) struct PoolLedgerTests {
    let folder = TempFolder()

    func device(_ arguments: [String]) throws -> (status: Int32, output: String) {
        try ChildProcess.run(Binaries.path("synclab-device"), arguments, limit: 30)
    }

    func db(_ id: String) -> String { folder.file("\(id).sqlite") }

    /// Starts the pool of p1 and p2 on the folder's files (no server listens: every pass times out) and waits until it
    /// answers `ping`.
    func startPool(_ control: ControlClient) throws -> ChildProcess {
        let spec = DevicePoolSpec(devices: ["p1", "p2"].map {
            DevicePoolSpec.Device(id: $0, account: "acme", token: "t-\($0)", platform: "android", db: db($0),
                                  startState: "foreground")
        })
        try spec.encoded().write(to: URL(fileURLWithPath: folder.file("spec.json")))
        return try startDevice([
            "pool", "--spec", folder.file("spec.json"), "--server", folder.ipc("nobody.sock"),
            "--control", folder.ipc("control.sock"), "--events", folder.file("pool.jsonl"),
            "--reply-timeout-ms", "200", "--time-scale", "60",
        ], log: folder.file("pool.log"), control: control, who: "the pool")
    }

    @Test func aRunningPoolKeepsItsLedgersAndASIGKILLLosesNoSavedEdit() async throws {
        try await onOwnThread {
            let context = try Context()
            let control = try controlClient(context, endpoint: folder.ipc("control.sock"))
            let pool = try startPool(control)
            defer { pool.killNow() }
            var keys: [String] = []
            for n in 1...5 {
                let saved = try control.data("edit", ["device": "p1", "draft": .string("d\(n)"), "action": "create",
                                                      "title": .string("t\(n)")])
                keys.append(try #require(saved?["key"]?.stringValue))
            }

            // While it runs: the files are the pool's alone, and its wal-index is in its heap.
            let refused = try #require(throws: SQLiteError.self) { try Database(path: db("p1"), busyTimeoutMs: 50) }
            #expect(refused.isBusy, "\(refused)")
            #expect(!FileManager.default.fileExists(atPath: db("p1") + "-shm"))
            let locked = try device(["status", "--db", db("p1")])
            #expect(locked.status == 1, "\(locked.output)")
            #expect(locked.output.contains("locked by the process that runs it"), "\(locked.output)")
            #expect(locked.output.contains("Device pool"), "\(locked.output)")

            // SIGKILL: the edits are in the WAL, never checkpointed, and a reader recovers them.
            pool.killNow()
            let wal = try FileManager.default.attributesOfItem(atPath: db("p1") + "-wal")[.size] as? NSNumber
            #expect((wal?.intValue ?? 0) > 0)
            let snapshot = try LedgerSnapshot.read(path: db("p1"))
            #expect(Set(keys).isSubset(of: Set(snapshot.ops.map(\.key))), "\(snapshot.ops.map(\.key))")
            let printed = try device(["status", "--db", db("p1"), "--json"])
            #expect(printed.status == 0, "\(printed.output)")
            #expect(try JSONValue.parse(printed.output)["pending"] == 5)

            // And the pool starts again on the same files with every edit pending.
            let again = try startPool(control)
            defer { again.killNow() }
            #expect(try control.data("status", ["device": "p1"])?["pending"] == 5)
            #expect(try control.data("stop") != nil)
            #expect(again.wait(timeout: 10) == 0)
        }
    }
}
