import LabKit
import SQLite
import SyncProtocol
import SyncServer

/// `ServerShell`'s twin on the simulated machine: the same `ServerInstance` and `ServerStore` (a real SQLite file),
/// the directives carried out in the same order with the same events, but the sockets are `SimWorld`'s links and
/// the delayed replies wait on its clock. Keep it in step with `ServerShell.perform`.
public final class SimServerShell {
    public let configuration: ServerConfiguration
    unowned let world: SimWorld
    let incarnation: Int
    let store: ServerStore
    var instance: ServerInstance
    public let pid: Int
    /// How `db` is named in `process.started`: relative to the run folder, so the bytes do not depend on `--out`.
    let databaseLabel: String
    /// Replies held back by the fault plan, by number, until their time comes (or a stop sends them).
    private var delayed: [Int: [[UInt8]]] = [:]
    private var nextDelayed = 0
    private var stopping = false

    public init(_ configuration: ServerConfiguration, world: SimWorld, databaseLabel: String) throws(ServerError) {
        self.configuration = configuration
        self.world = world
        self.databaseLabel = databaseLabel
        store = try ServerStore(path: configuration.databasePath, synchronous: configuration.synchronous)
        if let path = configuration.accountsPath {
            let file: AccountsFile
            do {
                file = try AccountsFile.load(path: path)
            } catch {
                throw .startup("\(error)")
            }
            try store.load(file)
        }
        instance = ServerInstance(devices: try store.devices(), heads: try store.heads(), faults: configuration.faults,
                                  seed: configuration.seed)
        incarnation = world.born(configuration.name)
        pid = world.pid()
    }

    var name: String { configuration.name }

    func emit(_ type: String, _ fields: [(String, JSONValue)]) { world.log.emit(name, type, fields) }

    func start() {
        var started: [(String, JSONValue)] = [
            ("role", "server"), ("pid", .int(pid)), ("listen", .string(configuration.listen)),
            ("db", .string(databaseLabel)),
        ]
        if let control = configuration.control { started.append(("control", .string(control))) }
        if let notify = configuration.notify {
            started.append(("notify", .string(notify)))
            started.append(("notifyMode", .string(configuration.notifyMode.rawValue)))
        }
        emit("process.started", started)
    }

    /// Killed: nothing more is written or sent.
    func abandon() { delayed.removeAll() }

    func onDeviceFrames(_ frames: [[UInt8]]) {
        guard !stopping, let (peer, payload) = Peer.split(frames) else { return }
        perform(instance.onDeviceMessage(from: peer, frames: payload))
    }

    func onControlFrames(_ frames: [[UInt8]]) {
        guard !stopping, let (peer, payload) = Peer.split(frames) else { return }
        perform(instance.onControlMessage(from: peer, frames: payload))
        if stopping { close() }
    }

    func perform(_ directives: [ServerDirective]) {
        for directive in directives {
            switch directive {
            case .reply(let peer, let message, let delayMs):
                let frames = peer.envelope(Codec.encode(message))
                if delayMs > 0 {
                    let number = nextDelayed
                    nextDelayed += 1
                    delayed[number] = frames
                    world.timer(name, incarnation: incarnation, at: world.scheduler.now + Int64(delayMs) * 1_000) {
                        [unowned self] in
                        if let frames = self.delayed.removeValue(forKey: number) { self.sendDevice(frames) }
                    }
                } else {
                    sendDevice(frames)
                }
            case .controlReply(let peer, let message):
                guard configuration.control != nil else { continue }
                world.toLauncher(from: name, frames: Array(peer.envelope(Codec.encode(message)).dropFirst()))
            case .apply(let request):
                do {
                    let outcomes = try store.apply(device: request.device, account: request.account, ops: request.ops,
                                                   injectRejections: request.injectRejections)
                    perform(instance.onApplied(request, outcomes: outcomes))
                } catch {
                    perform(instance.onApplyFailed(request, error: error))
                }
            case .pull(let request):
                do {
                    let page = try store.pull(account: request.account, cursor: request.cursor, limit: request.limit)
                    perform(instance.onPulled(request, page: page))
                } catch {
                    perform(instance.onPullFailed(request, error: error))
                }
            case .notify(let notice):
                guard configuration.notify != nil else { continue }
                let sent = world.notice(Codec.encode(.notice(notice)), mode: configuration.notifyMode.rawValue,
                                        highWaterMark: configuration.notifyHighWaterMark)
                perform(instance.onNotice(notice, sent: sent))
            case .addDevice(let record, let ticket):
                do {
                    try store.addDevice(record)
                    perform(instance.onDeviceAdded(record, ticket: ticket))
                } catch {
                    perform(instance.onDeviceAddFailed(error, ticket: ticket))
                }
            case .log(let event):
                emit(event.type, event.fields)
            case .stop:
                stopping = true
            }
        }
    }

    /// As `ServerShell.send`: a reply that cannot be routed is lost and logged; the device resends with the same key.
    private func sendDevice(_ frames: [[UInt8]]) {
        if world.fromServer(frames) { return }
        let type = frames.count >= 2 ? String(decoding: frames[frames.count - 2], as: UTF8.self) : ""
        let peer = Peer(routingID: frames.first ?? []).label
        emit("reply.lost", [("peer", .string(peer)), ("header", .string(type)),
                            ("reason", .string("the peer is gone or not reading"))])
    }

    private func close() {
        for number in delayed.keys.sorted() { sendDevice(delayed[number]!) }
        delayed.removeAll()
        emit("process.stopped", [("role", "server"), ("pid", .int(pid))])
        world.exited(name)
    }
}
