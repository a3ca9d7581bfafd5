import Foundation
import LabTestSupport
import Testing
import ZeroMQ

@Suite("Context")
struct ContextTests {
    /// Starts a thread that makes its own socket on `context`, says it is about to block, blocks in `wait`, and
    /// records the error that ends the wait. The thread owns the socket: it closes it on its way out.
    private func blockedThread(
        _ context: Context, wait: @escaping @Sendable (Socket) throws -> Void
    ) -> (started: DispatchSemaphore, finished: DispatchSemaphore, error: Box<ZMQError?>) {
        let started = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let error = Box<ZMQError?>(nil)
        let thread = Thread {
            defer { finished.signal() }
            do {
                let socket = try Socket.boundInproc(context, .pull, "blocked")
                defer { socket.close() }
                started.signal()
                try wait(socket)
            } catch let failure as ZMQError {
                error.value = failure
            } catch {
                Issue.record("unexpected error \(error)")
            }
        }
        thread.start()
        return (started, finished, error)
    }

    @Test("shutdown wakes a thread blocked in poll with a terminated error")
    func shutdownWakesPoll() throws {
        let context = try Context()
        let blocked = blockedThread(context) { socket in
            var poller = Poller([socket])
            _ = try poller.poll(timeoutMs: -1)
            Issue.record("poll returned without input and without an error")
        }
        #expect(blocked.started.wait(timeout: .now() + 10) == .success)
        // Give the thread a moment to enter zmq_poll; if it has not yet, poll fails at once, with the same error.
        usleep(50_000)
        context.shutdown()
        #expect(blocked.finished.wait(timeout: .now() + 10) == .success, "the polling thread did not exit")
        let error = try #require(blocked.error.value)
        #expect(error.isTerminated)
        #expect(error.operation == "poll")
    }

    @Test("shutdown wakes a thread blocked in receive with a terminated error")
    func shutdownWakesReceive() throws {
        let context = try Context()
        let blocked = blockedThread(context) { socket in
            let frames = try socket.receive()
            Issue.record("receive returned \(String(describing: frames)) instead of failing")
        }
        #expect(blocked.started.wait(timeout: .now() + 10) == .success)
        usleep(50_000)
        context.shutdown()
        #expect(blocked.finished.wait(timeout: .now() + 10) == .success, "the receiving thread did not exit")
        let error = try #require(blocked.error.value)
        #expect(error.isTerminated)
        #expect(error.description.contains("receive"))
    }

    @Test("a socket made after shutdown fails cleanly")
    func socketAfterShutdown() throws {
        let context = try Context()
        context.shutdown()
        #expect(throws: ZMQError.self) { try Socket(context, .dealer) }
    }
}
