import Foundation
import ZeroMQ

extension Socket {
    /// Receives with a bound wait, so a lost message fails the test instead of hanging it.
    func receive(within timeoutMs: Int32) throws -> [Frame]? {
        try setReceiveTimeout(ms: timeoutMs)
        return try receive()
    }

    /// A socket of `kind` bound to an inproc endpoint of its own (`name` and a fresh UUID): no two tests share one.
    /// `options` sets what must be set before the bind (a high-water mark only applies to pipes made after it).
    static func boundInproc(_ context: Context, _ kind: SocketKind, _ name: String,
                            options: (Socket) throws -> Void = { _ in }) throws -> Socket {
        let socket = try Socket(context, kind)
        try options(socket)
        try socket.bind("inproc://\(name)-\(UUID().uuidString)")
        return socket
    }
}

/// Two PULLs on inproc endpoints of their own, the second with "wake up" already queued from a PUSH (handed back so
/// it lives until the test is done with it): what a poller must tell apart.
func quietAndBusyPulls(_ context: Context, _ prefix: String) throws -> (quiet: Socket, busy: Socket, push: Socket) {
    let quiet = try Socket.boundInproc(context, .pull, prefix + "quiet")
    let busy = try Socket.boundInproc(context, .pull, prefix + "busy")
    let push = try Socket(context, .push)
    try push.connect(busy.lastEndpoint)
    try push.send([bytes("wake up")])
    return (quiet, busy, push)
}

func bytes(_ text: String) -> Frame { Array(text.utf8) }
func text(_ frame: Frame) -> String { String(decoding: frame, as: UTF8.self) }
