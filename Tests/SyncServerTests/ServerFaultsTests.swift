import LabTestSupport
import LabKit
import SyncProtocol
import Testing

@testable import SyncServer

@Suite("ServerFaults")
struct ServerFaultsTests {
    @Test("the faults command changes only the knobs it names; off resets all")
    func updates() throws {
        let start = ServerFaults(dropReply: 0.1, transient: 0.2, reject: 0.3, replyDelayMs: 40)
        let changed = try start.updated(with: ["transient": 0.5, "replyDelayMs": 0])
        #expect(changed == ServerFaults(dropReply: 0.1, transient: 0.5, reject: 0.3, replyDelayMs: 0))
        #expect(try start.updated(with: ["off": true]) == .off)
        #expect(try start.updated(with: ["off": true, "reject": 1]) == ServerFaults(reject: 1))
        #expect(try start.updated(with: [:]) == start)
    }

    @Test("bad arguments are refused, naming the argument")
    func badArguments() {
        #expect(throws: ServerError.invalidArgument(command: "faults", name: "dropReply",
                                                    problem: "must be a number from 0 to 1, got 2")) {
            _ = try ServerFaults.off.updated(with: ["dropReply": 2])
        }
        #expect(throws: ServerError.self) { _ = try ServerFaults.off.updated(with: ["replyDelayMs": -1]) }
        #expect(throws: ServerError.self) { _ = try ServerFaults.off.updated(with: ["replyDelayMs": "soon"]) }
        #expect(throws: ServerError.self) { _ = try ServerFaults.off.updated(with: ["dropreply": 0.5]) }
        #expect(throws: ServerError.self) { _ = try ServerFaults.off.updated(with: ["off": "yes"]) }
    }

    @Test("draws follow the seed, and knobs at zero draw nothing")
    func seededDraws() {
        let faults = ServerFaults(dropReply: 0.5, transient: 0.5, reject: 0.5)
        func run(_ seed: UInt64) -> [Bool] {
            var generator = SeededGenerator(seed: seed)
            var out: [Bool] = []
            for _ in 0..<50 {
                out.append(faults.drawTransient(using: &generator))
                out.append(faults.drawDropReply(using: &generator))
                out.append(contentsOf: (0..<4).map { faults.drawRejections(count: 4, using: &generator).contains($0) })
            }
            return out
        }
        #expect(run(7) == run(7))
        #expect(run(7) != run(8))
        #expect(run(7).contains(true) && run(7).contains(false))

        var generator = SeededGenerator(seed: 3)
        var before = generator
        #expect(!ServerFaults.off.drawTransient(using: &generator))
        #expect(ServerFaults.off.drawRejections(count: 100, using: &generator).isEmpty)
        #expect(!ServerFaults.off.drawDropReply(using: &generator))
        #expect(generator.next() == before.next())
        var always = SeededGenerator(seed: 3)
        #expect(ServerFaults(reject: 1).drawRejections(count: 5, using: &always) == [0, 1, 2, 3, 4])
    }
}
