import Foundation
import LabKit
import SQLite
import SyncProtocol
@testable import SyncDevice

/// Drives a `DeviceInstance` with a fake clock (`now`), a real ledger in a fresh temporary folder, and a scripted
/// server: it carries out directives exactly as the shell does, minus the sockets.
final class DeviceHarness {
    var instance: DeviceInstance
    let ledger: Ledger
    let folder: URL
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
    var log: [LogLine] = []
    var answered: [Int] = []
    var passes: [PassRecord] = []
    let device: String
    /// The process dies (SIGKILL) right after the cursor's own commit (`cursorCommit: beforePage`); `killed` then
    /// stops every later directive, as a dead process carries out nothing.
    var killAfterCursorCommit = false
    var killed = false

    init(platform: Platform, device: String = "b", settings: DeviceSettings = DeviceSettings(), now: Double = 0,
         seed: UInt64 = 7, folder: URL? = nil, brokerEnabled: Bool = false) throws {
        self.device = device
        self.folder = folder ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("device-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: self.folder, withIntermediateDirectories: true)
        ledger = try Ledger(path: self.folder.appendingPathComponent("\(device).sqlite").path, synchronous: .off)
        let identity = DeviceIdentity(device: device, account: "acme", token: "t-\(device)", platform: platform)
        let restored = try ledger.prepare(identity: identity, clock: SimClock(epochMicros: 0, scale: 1),
                                          settings: settings, now: now)
        self.now = now
        instance = DeviceInstance(identity: identity, settings: settings, restored: restored,
                                  brokerEnabled: brokerEnabled, rng: SeededGenerator.derived(seed: seed, name: device))
    }

    func removeFolder() { try? FileManager.default.removeItem(at: folder) }

    // MARK: - Driving

    func start() { run(instance.start(now: now)) }

    @discardableResult
    func edit(_ draft: String, _ action: DraftAction = .create, title: String? = "t", body: String? = "b") throws
        -> SavedEdit
    {
        let saved = try ledger.save(LocalEdit(draft: draft, action: action, title: title, body: body), device: device,
                                    wall: Int64(now * 1_000_000))
        run(instance.onEditSaved(saved, now: now))
        return saved
    }

    func lifecycle(_ command: LifecycleCommand) { run(instance.onLifecycle(command, now: now)) }

    func sync(token: Int, force: Bool = false) { run(instance.onSync(token: token, force: force, now: now)) }

    func hint(_ id: String, head: Int) {
        run(instance.onBrokerMessage(.hint(Hint(hint: id, account: "acme", head: head)),
                                     keys: ["account", "head", "hint"], now: now))
    }

    /// Moves the fake clock to `time`, firing every wake on the way.
    func advance(to time: Double) {
        var guardCount = 0
        while let wake = instance.nextWake, wake <= time, guardCount < 100_000 {
            now = max(now, wake)
            run(instance.onTick(now: now))
            guardCount += 1
        }
        now = max(now, time)
        run(instance.onTick(now: now))
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
            run(instance.onServerMessage(reply, now: now))
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

    /// Carries out directives as the shell does; replies are handed back after the whole list ran.
    func run(_ directives: [DeviceDirective]) {
        execute(directives)
        pump()
    }

    private func execute(_ directives: [DeviceDirective]) {
        for directive in directives where !killed {
            switch directive {
            case .sendToServer(let message):
                outbox.append(message)
                sentMessages.append(message)
            case .sendToBroker(let message): toBroker.append(message)
            case .beginPass(let id, let trigger, let at): try! ledger.beginPass(id: id, trigger: trigger, at: at)
            case .claim(let request): execute(instance.onClaimed(try! ledger.claim(request), now: now))
            case .recordOutcomes(let outcomes, _): try! ledger.record(outcomes, wall: Int64(now * 1_000_000))
            case .applyPage(let page): try! ledger.apply(page, wall: Int64(now * 1_000_000))
            case .commitCursor(let seq, _):
                try! ledger.commitCursor(to: seq)
                if killAfterCursorCommit {
                    killed = true
                    return
                }
            case .dropQueue(let reason):
                let keys = try! ledger.dropQueue()
                if !keys.isEmpty { log.append(DeviceInstance.queueLost(keys, reason: reason)) }
            case .endPass(let record):
                try! ledger.endPass(record)
                passes.append(record)
            case .recordAppOpen(let at, let age): try! ledger.recordAppOpen(at: at, dataAge: age)
            case .answerSync(let tokens): answered += tokens
            case .log(let line): log.append(line)
            }
        }
    }

    // MARK: - Reading

    func events(_ type: String) -> [LogLine] { log.filter { $0.type == type } }
    func passes(_ trigger: Trigger) -> [PassRecord] { passes.filter { $0.trigger == trigger } }
    func status(_ key: String) throws -> OpStatus? { try ledger.op(key)?.status }
    func sentPushes() -> [Push] {
        sentMessages.compactMap { if case .push(let push) = $0 { return push } else { return nil } }
    }

    /// Every message sent to the server so far (the outbox keeps only the unanswered ones).
    var sentMessages: [Message] = []
}
