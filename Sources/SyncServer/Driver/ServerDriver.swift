import LabKit
import SQLite
import SyncProtocol

/// What a `ServerDriver` needs from the machine it runs on: `ServerShell`'s sockets and event file, or the
/// simulated machine's links (`SimServerShell`). Nothing here decides anything.
public protocol ServerIO: EventEmitter {
    /// Monotonic ns (real, or the simulation's virtual clock): the refusal limiter's seconds.
    var nanos: UInt64 { get }
    var pid: Int { get }
    /// A request's directives begin or end: a real shell holds its events and writes them in one go.
    func stepBegan()
    func stepEnded()
    /// Writes what the events hold before something leaves the process.
    func flushEvents()
    /// Sends on the device ROUTER; nil when it left, otherwise why not.
    func sendDevice(_ frames: [[UInt8]]) -> String?
    /// Holds a reply back for `delayMs` of real time (the fault plan), then sends it with `sendDevice`.
    func delay(_ frames: [[UInt8]], ms: Int)
    /// Sends on the control ROUTER; false when there is no control socket.
    func sendControl(_ frames: [[UInt8]])
    /// Sends a notice to the broker; false when the socket would block (PUSH at its high-water mark). nil when the
    /// server has no notice socket.
    func sendNotice(_ frames: [[UInt8]]) -> Bool?
    /// A device was added (or its key replaced): a real shell updates its ZAP policy.
    func deviceAdded(_ record: DeviceRecord)
    /// An armed crash point fired: a real process dies here and never returns; the simulation marks it dead.
    func die(at point: CrashPoint, nth: Int, work: Int)
    /// Crash-anywhere: true when the process dies right after this boundary. A real process says false.
    func dies(after boundary: ServerBoundary) -> Bool
}

/// A point between two things the server carries out, where crash-anywhere may kill it.
public enum ServerBoundary: String, Sendable, CaseIterable {
    case directive, commit, reply
}

extension ServerIO {
    public func stepBegan() {}
    public func stepEnded() {}
    public func flushEvents() {}
    public func deviceAdded(_ record: DeviceRecord) {}
    public func dies(after boundary: ServerBoundary) -> Bool { false }
}

/// The server's logic between its instance and its machine, the same for the real process and the simulation: it
/// hands the instance each message and carries out the directives it returns against the store, in order.
public final class ServerDriver {
    public let configuration: ServerConfiguration
    unowned let io: ServerIO
    public let store: ServerStore
    public internal(set) var instance: ServerInstance
    /// Set by the control command `stop`.
    public internal(set) var stopping = false
    /// Set when the process died in the middle of a request (the simulation): it carries out nothing more.
    public var killed: Bool { mortality.killed }
    /// Where this process dies (`--crash-at`, control `crashAt`), and whether it did.
    var mortality: Mortality
    /// The pull whose page is being answered (set while `onPulled`'s directives are carried out).
    var servingPull: PullRequest?
    static let pageHeader = Codec.encode(.page(Page(req: 0, changes: [], next: 0, head: 0)))[0]
    static let pushResultHeader = Codec.encode(.pushResult(PushResult(req: 0, results: [])))[0]
    /// Bounds the `request.refused` and `reply.lost` lines a flood can write (per peer and in all).
    public internal(set) var refusals = RefusalLimiter()
    /// The last refusal was held back, so the `hello.refused` that follows it is too.
    var refusalSuppressed = false


    /// Opens the database and loads the accounts file; every failure names the flag or file at fault.
    public init(_ configuration: ServerConfiguration, io: ServerIO) throws(ServerError) {
        self.configuration = configuration
        self.io = io
        do {
            store = try ServerStore(path: configuration.databasePath, synchronous: configuration.settings.synchronous)
        } catch {
            throw .startup("cannot open --db \(configuration.databasePath): \(error)")
        }
        if let path = configuration.accountsPath {
            let file: AccountsFile
            do {
                file = try AccountsFile.load(path: path)
            } catch {
                throw ServerError(error)
            }
            do {
                try store.load(file)
            } catch {
                throw .startup("cannot load --accounts \(path) into --db \(configuration.databasePath): \(error)")
            }
        }
        mortality = Mortality(armed: configuration.process.crashAt)
        instance = ServerInstance(devices: try store.devices(), heads: try store.heads(),
                                  faults: configuration.settings.faults, seed: configuration.process.seed,
                                  switches: configuration.settings.switches)
    }

    // MARK: - Messages

    /// A request on the device ROUTER, from `peer`.
    public func onDeviceMessage(from peer: Peer, frames: [[UInt8]]) {
        guard !killed else { return }
        instance.realNanos = io.nanos
        run(instance.onDeviceMessage(from: peer, frames: frames))
    }

    /// A message on the control ROUTER: the peer's routing id, then the message's frames.
    public func onControlFrames(_ frames: [[UInt8]]) {
        guard !killed, let (peer, payload) = Peer.split(frames) else { return }
        run(instance.onControlMessage(from: peer, frames: payload))
    }

    /// A connection closed (CURVE): its session ends.
    public func onConnectionEnded(_ connection: Int32) {
        instance.onConnectionEnded(connection)
    }

    /// Writes a refusal unless this peer (or everyone) refused too many this second; what is held back is counted
    /// and reported with the next line that is written for that peer.
    public func logRefusal(_ type: String, _ fields: [(String, JSONValue)]) {
        let peer = fields.first(where: { $0.0 == "peer" })?.1.stringValue ?? ""
        let (write, suppressed) = refusals.admit(peer: peer, nanos: io.nanos)
        refusalSuppressed = !write
        guard write else { return }
        io.emit(type, suppressed > 0 ? fields + [("suppressed", .int(suppressed))] : fields)
    }

    // MARK: - Directives

    /// Carries out one request's directives; the events of a request go out in one write, flushed before a send.
    func run(_ directives: [ServerDirective]) {
        io.stepBegan()
        defer { io.stepEnded() }
        do {
            try perform(directives)
        } catch {
            mortality.markKilled()
        }
    }

    func perform(_ directives: [ServerDirective]) throws {
        for directive in directives {
            try mortality.alive()
            try carryOut(directive)
            try boundary(.directive)
        }
    }

    func carryOut(_ directive: ServerDirective) throws {
        switch directive {
        case .reply(let peer, let message, let delayMs):
            io.flushEvents()
            let frames: [[UInt8]]
            if case .page(let page) = message, let pull = servingPull {
                // A page for the pull being served: its body is encoded once for every pull of the same page.
                frames = peer.envelope([Self.pageHeader, cachedBody(of: page, for: pull)])
            } else if case .pushResult(let result) = message, let page = result.page, let pull = servingPull {
                // The page a push asked for, encoded once as any pull's (and kept for the pulls that follow it).
                let body = Codec.pushResultBody(result, pageBody: cachedBody(of: page, for: pull))
                frames = peer.envelope([Self.pushResultHeader, body])
            } else {
                frames = peer.envelope(Codec.encode(message))
            }
            if delayMs > 0 {
                io.delay(frames, ms: delayMs)
            } else {
                send(frames)
            }
            if case .pushResult = message { try reach(.serverAfterReply) }
            try boundary(.reply)
        case .controlReply(let peer, let message):
            guard configuration.process.control != nil else { return }
            io.flushEvents()
            io.sendControl(peer.envelope(Codec.encode(message)))
        case .apply(let request):
            // The design switches `noticeBeforeCommit` / `replyBeforeCommit` send from inside the transaction.
            let switches = instance.switches.effective(for: request.account)
            let early: (([AppliedOp]) -> Void)? = switches.sendsBeforeCommit
                ? { [self] outcomes in try? perform(instance.onDecided(request, outcomes: outcomes)) } : nil
            var decided: [AppliedOp] = []
            let outcomes: [AppliedOp]
            do {
                outcomes = try store.apply(device: request.device, account: request.account, ops: request.ops,
                                           injectRejections: request.injectRejections,
                                           idempotency: request.idempotency, failCommit: request.failCommit,
                                           beforeCommit: early, decided: { decided = $0 })
            } catch {
                try perform(instance.onApplyFailed(request, error: error, decided: decided))
                return
            }
            try reach(.serverAfterCommitBeforeReply, work: outcomes.filter { $0.change != nil }.count)
            try boundary(.commit)
            try perform(instance.onApplied(request, outcomes: outcomes))
        case .pull(let request):
            let page: PageSlice
            do {
                page = try store.pull(account: request.account, cursor: request.cursor, limit: request.limit)
            } catch {
                try perform(instance.onPullFailed(request, error: error))
                return
            }
            servingPull = request
            defer { servingPull = nil }
            try perform(instance.onPulled(request, page: page))
        case .notify(let notice):
            io.flushEvents()
            guard let sent = io.sendNotice(Codec.encode(.notice(notice))) else { return }
            if sent { try reach(.serverAfterNotice) }
            try perform(instance.onNotice(notice, sent: sent))
        case .addDevice(let record, let ticket):
            do {
                try store.addDevice(record)
            } catch {
                try perform(instance.onDeviceAddFailed(error, ticket: ticket))
                return
            }
            io.deviceAdded(record)
            try perform(instance.onDeviceAdded(record, ticket: ticket))
        case .armCrash(let args, let ticket):
            // The crash points are the driver's (it does the killing); the instance answers.
            let answer: (ok: Bool, detail: String)
            do {
                answer = (true, try mortality.crashPoints.control(args, role: "server"))
            } catch {
                answer = (false, "\(error)")
            }
            try perform(instance.onCrashArmed(ok: answer.ok, detail: answer.detail, ticket: ticket))
        case .log(let event):
            if event.type == EventCatalogue.requestRefused {
                logRefusal(event.type, event.fields)
            } else if event.type == EventCatalogue.helloRefused {
                if !refusalSuppressed { io.emit(event.type, event.fields) }
            } else {
                io.emit(event.type, event.fields)
            }
        case .stop:
            stopping = true
        }
    }

    /// The body of `page`, the answer to `pull`, from the store's page cache (encoded once for every pull of it).
    func cachedBody(of page: Page, for pull: PullRequest) -> [UInt8] {
        store.pageCache.body(of: page, account: pull.account, cursor: pull.cursor, limit: pull.limit)
    }

    /// Sends a reply without blocking: a client that stopped reading, or went away, loses it rather than stall
    /// everyone else. A lost reply is logged (rate-limited per peer, like refusals); the device resends it with the
    /// same key.
    public func send(_ frames: [[UInt8]]) {
        guard let failure = io.sendDevice(frames) else { return }
        replyLost(peer: frames.first ?? [], header: frames.count >= 2 ? frames[frames.count - 2] : [],
                  reason: failure)
    }

    /// A reply libzmq did not take: a rate-limited `reply.lost` naming its peer, its header and why.
    public func replyLost(peer routingID: [UInt8], header: [UInt8], reason failure: String) {
        let type = String(decoding: header, as: UTF8.self)
        let peer = Peer(routingID: routingID).label
        let (write, suppressed) = refusals.admit(peer: "lost:" + peer, nanos: io.nanos)
        guard write else { return }
        var fields: [(String, JSONValue)] = [("peer", .string(peer)), ("header", .string(type)),
                                             ("reason", .string(failure))]
        if suppressed > 0 { fields.append(("suppressed", .int(suppressed))) }
        io.emit(.replyLost, fields)
    }

    /// Counts one occurrence of `point`; dies there when it is the armed one.
    func reach(_ point: CrashPoint, work: Int = 1) throws {
        guard let nth = mortality.fires(point, work: work) else { return }
        io.die(at: point, nth: nth, work: work)
        try mortality.die()
    }

    func boundary(_ kind: ServerBoundary) throws {
        guard io.dies(after: kind) else { return }
        try mortality.die()
    }
}
