import Foundation
import LabKit
import LabTestSupport
import SQLite
import SyncProtocol
@testable import SyncDevice

/// Drives a device through the real `DeviceDriver` (the code a device process and the simulation run) with a fake
/// clock (`now`), a real ledger in a fresh temporary folder, and a scripted server in place of the sockets.
final class DeviceHarness: DeviceIO {
    var driver: DeviceDriver!
    let folder: TempFolder
    let databasePath: String
    var now: Double
    var server = ScriptedServer()
    /// While false, requests to the server wait in `outbox` unanswered (a slow or dead server).
    var serverAnswers = true
    /// Requests matching this wait in `held` (a server slow to answer them) until `releaseHeld()`.
    var hold: (Message) -> Bool = { _ in false }
    var held: [Message] = []
    /// Replies matching this are lost on the way back.
    var loseReply: (Message) -> Bool = { _ in false }
    var outbox: [Message] = []
    var toBroker: [Message] = []
    var log: [EventLine] = []
    var answered: [Int] = []
    let device: String
    /// The process dies (SIGKILL) right after the commit that moves the ledger's cursor on its own
    /// (`cursorCommit: beforePage`); the driver then carries out nothing more, as a dead process does nothing.
    var killAfterCursorCommit = false
    var killed: Bool { driver.killed }
    private var cursorAtLastCommit = 0
    /// Commits that wrote WAL frames (the `-wal` file grew; the tests never write enough for a checkpoint).
    var writingCommits = 0
    /// Commits of a step's open transaction made before a send or a reply (each one a `.commit` boundary).
    var commitBoundaries = 0
    private var walBytes: Int64 = 0

    init(platform: Platform, device: String = "b", settings: DeviceSettings = DeviceSettings(), now: Double = 0,
         seed: UInt64 = 7, folder: TempFolder? = nil, brokerEnabled: Bool = false) throws {
        self.device = device
        self.folder = folder ?? TempFolder()
        databasePath = self.folder.file("\(device).sqlite")
        self.now = now
        let identity = DeviceIdentity(device: device, account: "acme", token: "t-\(device)", platform: platform)
        var configuration = DeviceConfiguration(
            identity: identity, settings: settings, databasePath: databasePath, serverEndpoint: "inproc://unused",
            brokerEndpoint: brokerEnabled ? "inproc://unused-broker" : nil, clock: SimClock(epochMicros: 0, scale: 1),
            seed: seed, synchronous: .off)
        configuration.name = device
        driver = try DeviceDriver(configuration, io: self)
        cursorAtLastCommit = try ledger.cursor()
    }

    var instance: DeviceInstance {
        get { driver.instance }
        set { driver.instance = newValue }
    }
    var ledger: Ledger { driver.ledger }

    /// Removes the folder now (it goes anyway when the last harness holding it is released).
    func removeFolder() { try? FileManager.default.removeItem(atPath: folder.path) }

    // MARK: - DeviceIO

    var wallMicros: Int64 { Int64(now * 1_000_000) }
    var pid: Int { 1 }
    func emit(_ type: String, _ fields: [(String, JSONValue)]) { log.append(EventLine(type, fields)) }

    func transmit(_ message: Message, to peer: DevicePeer) -> String? {
        switch peer {
        case .server:
            outbox.append(message)
            sentMessages.append(message)
        case .broker:
            toBroker.append(message)
        }
        return nil
    }

    func answerControl(_ message: Message, to peer: [UInt8]) {}
    func die(at point: CrashPoint, nth: Int, work: Int) {}

    func dies(after boundary: DeviceBoundary) -> Bool {
        observeWAL()
        guard boundary == .commit else { return false }
        commitBoundaries += 1
        let cursor = (try? ledger.cursor()) ?? cursorAtLastCommit
        defer { cursorAtLastCommit = cursor }
        return killAfterCursorCommit && cursor != cursorAtLastCommit
    }

    // Every commit is followed by a boundary (`dies(after:)`) or by the step's end before the next one can come.
    func stepEnded() { observeWAL() }

    private func observeWAL() {
        let attributes = try? FileManager.default.attributesOfItem(atPath: databasePath + "-wal")
        let size = (attributes?[.size] as? NSNumber)?.int64Value ?? 0
        if size > walBytes { writingCommits += 1 }
        walBytes = max(walBytes, size)
    }

    func openLedger(wiping: Bool) throws -> Ledger {
        if wiping { try Ledger.removeFiles(at: databasePath) }
        return try Ledger(path: databasePath, synchronous: .off)
    }

    // MARK: - Driving

    func start() { run { $0.start(now: self.now) } }

    @discardableResult
    func edit(_ draft: String, _ action: DraftAction = .create, title: String? = "t", body: String? = "b") throws
        -> SavedEdit
    {
        let saved = try driver.save(LocalEdit(draft: draft, action: action, title: title, body: body))
        pump()
        return saved
    }

    func lifecycle(_ command: LifecycleCommand) { run { $0.onLifecycle(command, now: self.now) } }

    func sync(token: Int, force: Bool = false) {
        driver.requestSync(force: force, waiter: .pool { [unowned self] _ in self.answered.append(token) })
        pump()
    }

    func hint(_ id: String, head: Int) {
        run {
            $0.onBrokerMessage(.hint(Hint(hint: id, account: "acme", head: head)), keys: ["account", "head", "hint"],
                               now: self.now)
        }
    }

    /// Moves the fake clock to `time`, firing every wake on the way.
    func advance(to time: Double) {
        var guardCount = 0
        while let wake = instance.nextWake, wake <= time, guardCount < 100_000 {
            now = max(now, wake)
            run { $0.onTick(now: self.now) }
            guardCount += 1
        }
        now = max(now, time)
        run { $0.onTick(now: self.now) }
    }

    func advance(by seconds: Double) { advance(to: now + seconds) }

    /// Answers what waits in the outbox (when the server answers).
    func pump() {
        while serverAnswers, !outbox.isEmpty {
            let request = outbox.removeFirst()
            if hold(request) {
                held.append(request)
                continue
            }
            guard let reply = server.answer(request, from: device) else { continue }
            if loseReply(reply) { continue }
            driver.drive { $0.onServerMessage(reply, now: self.now) }
        }
    }

    /// The slow server finally answers what it held (the device may have given up on it long ago).
    func releaseHeld() {
        let requests = held
        held = []
        hold = { _ in false }
        outbox = requests + outbox
        pump()
    }

    /// Runs one instance step through the driver; replies are handed back after the whole step ran.
    func run(_ step: (inout DeviceInstance) -> [DeviceDirective]) {
        driver.drive(step)
        pump()
    }

    /// Carries out directives an instance returned outside the driver (a test that called the instance itself).
    func run(_ directives: [DeviceDirective]) {
        driver.drive { _ in directives }
        pump()
    }

    // MARK: - Reading

    func events(_ type: String) -> [EventLine] { log.filter { $0.type == type } }
    /// Every pass that ended, from the ledger.
    var passes: [PassRow] { ((try? ledger.passes()) ?? []).filter { $0.outcome != nil } }
    func passes(_ trigger: Trigger) -> [PassRow] { passes.filter { $0.trigger == trigger } }
    func status(_ key: String) throws -> OpStatus? { try ledger.op(key)?.status }
    func sentPushes() -> [Push] {
        sentMessages.compactMap { if case .push(let push) = $0 { return push } else { return nil } }
    }

    /// Every message sent to the server so far (the outbox keeps only the unanswered ones).
    var sentMessages: [Message] = []
}
