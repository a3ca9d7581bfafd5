import Foundation

/// Runs blocking socket work (zmq_poll, waiting for a child process) on a dedicated thread instead of Swift's
/// cooperative pool, while staying in the calling test's task, so `#expect` inside still reports to that test.
public func onOwnThread<T>(_ body: () throws -> T) async throws -> T {
    let executor = ThreadExecutor()
    defer { executor.shutdown() }
    return try await withTaskExecutorPreference(executor) {
        // The switch to the preferred executor happens at a suspension, and not always at the first one: suspend
        // until the body runs on the executor's thread (on a loaded machine that can take many yields; a count
        // of them was not enough, so the bound is time).
        // Both the executor's own record and the thread's name must say so: once, on a loaded machine, a body ran on
        // a pool thread ("com.apple.root.default-qos") after the first alone had said it was home.
        let deadline = Date().addingTimeInterval(30)
        while !(executor.isCurrent && Thread.current.name == ThreadExecutor.threadName) && Date() < deadline {
            await Task.yield()
        }
        return try body()
    }
}

/// A task executor with one thread of its own.
public final class ThreadExecutor: TaskExecutor, @unchecked Sendable {  // jobs are guarded by `condition`
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var stopped = false
    private var thread: pthread_t?

    /// The name of every executor's thread (what tests check they run on).
    public static let threadName = "test-io"

    /// True on the executor's own thread.
    public var isCurrent: Bool {
        condition.lock()
        defer { condition.unlock() }
        return thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false
    }

    public init() {
        let started = DispatchSemaphore(value: 0)
        Thread { [self] in run(started: started) }.start()
        // The thread records itself before any job can be enqueued, so `isCurrent` is never asked too early.
        started.wait()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    public func shutdown() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
    }

    private func run(started: DispatchSemaphore) {
        // Named from inside: on Linux a name set before start() does not reach the new thread.
        Thread.current.name = Self.threadName
        condition.lock()
        thread = pthread_self()
        condition.unlock()
        started.signal()
        while true {
            condition.lock()
            while jobs.isEmpty && !stopped { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
