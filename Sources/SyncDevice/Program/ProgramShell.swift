import Foundation
import LabKit
import SyncProtocol
import ZeroMQ

/// The IO of an outside device's lab side (`synclab-device program`): the broker DEALER, the control ROUTER, the
/// event file and the program itself, a child process spoken to in JSON lines on its standard input and output
/// (docs/DEVICE-CONTRACT.md). It carries out what `ProgramInstance` decides, in order; a broken contract ends the
/// program and this process with status 3 and a `program.failed` event that says what the program did.
public final class ProgramShell {
    public let configuration: DeviceConfiguration
    let program: ProgramConfiguration
    let events: EventLog
    let context: Context
    let broker: Socket?
    let control: Socket?
    let zap: ZapHandler?
    var instance: ProgramInstance
    var child: ProgramChild?
    var stopping = false
    var failure: String?
    /// The program was killed (`ProgramDirective.killProgram`): started again once the directives are carried out.
    var restartPending = false

    public init(_ configuration: DeviceConfiguration, program: ProgramConfiguration) throws {
        self.configuration = configuration
        self.program = program
        events = try EventLog(path: configuration.eventsPath, process: configuration.name, clock: configuration.clock)
        context = try Context()
        let keys = try configuration.keys?.load()
        if let keys, configuration.controlEndpoint != nil {
            zap = try ZapHandler(context, policy: ["control": keys.launcher.map { [$0: "launcher"] } ?? [:]])
        } else {
            zap = configuration.controlEndpoint == nil ? nil : try ZapHandler(context, policy: [:], open: true)
        }
        broker = try DeviceSockets.broker(context, endpoint: configuration.brokerEndpoint, own: keys?.own,
                                          brokerKey: keys?.broker)
        control = try DeviceSockets.control(context, endpoint: configuration.controlEndpoint, own: keys?.own)
        instance = ProgramInstance(identity: configuration.identity, settings: configuration.settings,
                                   brokerEnabled: broker != nil, answerWithinMs: program.answerWithinMs,
                                   rng: SeededGenerator.derived(seed: configuration.seed,
                                                                name: configuration.identity.device))
    }

    var now: Double { configuration.clock.now() }

    /// Starts the program, waits for its `ready`, then serves until `stop`, a signal or a broken contract. Returns
    /// the exit status: 0 a clean stop, 3 the program broke the contract.
    public func run() -> Int32 {
        Signals.install()
        events.emit(EventCatalogue.processStarted.name, [
            ("role", "device"), ("pid", .int(Int(getpid()))), ("device", .string(configuration.identity.device)),
            ("platform", .string(configuration.identity.platform.rawValue)), ("outside", true),
        ])
        if let ready = startProgram() { carry(instance.start(ready: ready, now: now)) }
        serve()
        return finish()
    }

    /// Starts the program and waits for its `ready`; nil when it broke the contract doing so.
    private func startProgram() -> JSONValue? {
        do {
            let started = try ProgramChild(argv: program.argv, pidFile: program.pidFile)
            child = started
            events.emit(EventCatalogue.programStarted.name, [
                ("pid", .int(Int(started.pid))), ("argv", .array(program.argv.map { .string($0) })),
            ])
            return try started.readReady(within: program.answerWithinMs)
        } catch {
            fail("\(error)")
            return nil
        }
    }

    /// After a kill: the program again, as the OS launches an app again for its next task.
    private func restartProgram() {
        restartPending = false
        guard failure == nil, !stopping, let ready = startProgram() else { return }
        carry(instance.restarted(ready: ready, now: now))
    }

    private func serve() {
        guard var child, failure == nil else { return }
        func makePoller(_ child: ProgramChild) -> Poller {
            var poller = Poller([broker, control, zap?.socket].compactMap { $0 })
            poller.add(fd: child.output)
            return poller
        }
        var poller = makePoller(child)
        while !stopping && failure == nil && !Signals.stopRequested {
            if let current = self.child, current !== child {
                // Started again after a kill: its new pipe replaces the old one.
                child = current
                poller = makePoller(child)
            }
            let ready: [Int]
            do {
                ready = try poller.poll(timeoutMs: pollTimeoutMs())
                if let zap { try zap.serve() }
            } catch {
                break
            }
            for index in ready where index < poller.sockets.count && poller.sockets[index] !== zap?.socket {
                let socket = poller.sockets[index]
                while failure == nil, let frames = try? socket.receive(dontWait: true) {
                    socket === broker ? onBroker(frames) : onControl(frames)
                }
            }
            // A kill while the sockets were served started the program again: read the new one, never the old one's
            // closed descriptor (its number may now be the new pipe's).
            if let current = self.child, current !== child { continue }
            readProgram(child)
            if failure == nil, self.child === child, let status = child.exited() {
                fail(status.text)
            }
            carry(instance.onTick(now: now))
        }
    }

    private func readProgram(_ child: ProgramChild) {
        guard self.child === child else { return }
        do {
            for (number, line) in try child.readLines() where failure == nil && self.child === child {
                guard let value = try? JSONValue.parse(line), case .object = value else {
                    fail("line \(number) of its output is not a JSON object: \(ProgramChild.quote(line))")
                    return
                }
                carry(instance.onProgramLine(value, line: number, now: now))
            }
        } catch {
            fail("\(error)")
        }
    }

    private func onBroker(_ frames: [[UInt8]]) {
        let keys = DeviceDriver.bodyKeys(frames)
        switch Codec.decodeOrReply(frames) {
        case .success(let message): carry(instance.onBrokerMessage(message, keys: keys, now: now))
        case .failure(let error): carry(instance.onBrokerGarbage(error, keys: keys, now: now))
        }
    }

    private func onControl(_ frames: [[UInt8]]) {
        guard let peer = frames.first else { return }
        switch Codec.decodeOrReply(Array(frames.dropFirst())) {
        case .success(.control(let request)): carry(instance.onControl(request, from: peer, now: now))
        case .success(let other):
            answer(peer, .error(ErrorReply(code: .unexpected, message: "control: \(other.type) is not a control")))
        case .failure(let error):
            answer(peer, .error(ErrorReply(code: error.code, message: "\(error)")))
        }
    }

    private func answer(_ peer: [UInt8], _ message: Message) {
        _ = try? control?.send([peer] + Codec.encode(message), dontWait: true)
    }

    /// Carries out the directives in order.
    private func carry(_ directives: [ProgramDirective]) {
        for directive in directives {
            switch directive {
            case .toProgram(let value):
                do { try child?.write(value.description) } catch { fail("\(error)") }
            case .toBroker(let message):
                _ = try? broker?.send(Codec.encode(message), dontWait: true)
            case .answer(let peer, let ack):
                answer(peer, .controlAck(ack))
            case .log(let line):
                events.emit(line.type, line.fields)
            case .fail(let reason):
                fail(reason)
            case .killProgram(let reason, let pass):
                guard let child, !restartPending else { break }
                // SIGKILL at once (no grace: the grace was the window's), reaped; nothing more is read from it.
                _ = child.stop(graceMs: 0)
                var fields: [(String, JSONValue)] = [("pid", .int(Int(child.pid))), ("reason", .string(reason))]
                if let pass { fields.append(("pass", .int(pass))) }
                events.emit(EventCatalogue.programKilled.name, fields)
                restartPending = true
            case .stop:
                stopping = true
            }
        }
        // At once, before anything else is asked of the program: the directives after the kill (pass.end) are
        // written first, and nothing is written to the dead one's pipe.
        if restartPending { restartProgram() }
    }

    /// The contract is broken: say so once, in the events and the log (the launcher quotes the log's last line).
    private func fail(_ reason: String) {
        guard failure == nil else { return }
        failure = reason
        events.emit(EventCatalogue.programFailed.name, [("reason", .string(reason))])
        Output.stderr("synclab-device \(configuration.identity.device): the outside program broke the device "
            + "contract: \(reason)\n")
    }

    private func finish() -> Int32 {
        if let child {
            let clean = failure == nil
            if clean { try? child.write(JSONValue.object([("req", 0), ("type", "stop")]).description) }
            let status = child.stop(graceMs: clean ? 3_000 : 0)
            events.emit(EventCatalogue.programExited.name, [("status", .string(status.text))])
        }
        events.emit(EventCatalogue.processStopped.name, [("role", "device"), ("pid", .int(Int(getpid())))])
        events.flush()
        try? control?.setLinger(ms: 500)
        control?.close()
        broker?.close()
        zap?.close()
        context.terminate()
        return failure == nil ? 0 : 3
    }

    func pollTimeoutMs() -> Int {
        guard let wake = instance.nextWake else { return 100 }
        let realMs = (wake - now) / configuration.clock.scale * 1_000
        guard realMs.isFinite else { return 100 }
        return Int(max(1, min(100, realMs.rounded(.up))))
    }
}
