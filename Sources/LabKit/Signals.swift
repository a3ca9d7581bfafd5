import Foundation

/// Turns SIGTERM and SIGINT into a flag the IO loop checks between polls, and an optional action (e.g. shutting down
/// a zmq context so a blocking poll returns).
public enum Signals {
    private static let flag = Flag()

    final class Flag: @unchecked Sendable {  // written by the signal handler, read by the IO thread; a C atomic int
        var value: sig_atomic_t = 0
    }

    /// True once SIGTERM or SIGINT arrived.
    public static var stopRequested: Bool { flag.value != 0 }

    /// Installs handlers for SIGTERM and SIGINT and ignores SIGPIPE.
    public static func install() {
        signal(SIGPIPE, SIG_IGN)
        let handler: @convention(c) (Int32) -> Void = { _ in Signals.flag.value = 1 }
        signal(SIGTERM, handler)
        signal(SIGINT, handler)
    }
}
