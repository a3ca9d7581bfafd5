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

    /// Installs handlers for SIGTERM and SIGINT and ignores SIGPIPE. Also unblocks SIGTERM and SIGINT: a process
    /// spawned from a thread that blocked them (Foundation's `Process` from a test thread does) inherits the mask and
    /// would otherwise never see a stop request.
    public static func install() {
        var stopSignals = sigset_t()
        sigemptyset(&stopSignals)
        sigaddset(&stopSignals, SIGTERM)
        sigaddset(&stopSignals, SIGINT)
        pthread_sigmask(SIG_UNBLOCK, &stopSignals, nil)
        signal(SIGPIPE, SIG_IGN)
        let handler: @convention(c) (Int32) -> Void = { _ in Signals.flag.value = 1 }
        signal(SIGTERM, handler)
        signal(SIGINT, handler)
    }
}
