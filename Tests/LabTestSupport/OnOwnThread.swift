import Foundation

/// Runs blocking socket work (zmq_poll, waiting for a child process) on a dedicated thread instead of Swift's
/// cooperative pool, in a task that inherits the calling test's task-locals, so `#expect` inside still reports to
/// that test. The task starts on the thread (`Task(executorPreference:)`); hopping the calling task over with
/// `withTaskExecutorPreference` was not reliable: in a serialized suite on a loaded machine the body ran on a pool
/// thread, or never moved within 30 s.
public func onOwnThread<T>(_ body: () throws -> T) async throws -> T {
    let executor = ThreadExecutor()
    defer { executor.shutdown() }
    return try await withoutActuallyEscaping(body) { body in
        // Awaited before this returns, so neither the closure nor its result outlives the call.
        let work = Unchecked(body)
        let task = Task(executorPreference: executor) { () throws -> Unchecked<T> in
            Unchecked(try work.value())
        }
        return try await task.value.value
    }
}

/// A value handed across the task boundary of `onOwnThread`, which awaits the task before it returns.
struct Unchecked<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// A task executor with one thread of its own.
public final class ThreadExecutor: TaskExecutor, @unchecked Sendable {  // jobs are guarded by `condition`
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var stopped = false
    private var thread: pthread_t?

    /// The name of every executor's thread.
    public static let threadName = "test-io"

    /// The threads of the executors alive now.
    nonisolated(unsafe) private static var threads: Set<UInt> = []
    private static let threadsLock = NSLock()

    /// True on the thread of some `ThreadExecutor` (what tests check they run on; a thread's name is not a reliable
    /// witness here).
    public static var isOnExecutorThread: Bool {
        threadsLock.lock()
        defer { threadsLock.unlock() }
        return threads.contains(UInt(pthread_self()))
    }

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
        Self.threadsLock.lock()
        Self.threads.insert(UInt(pthread_self()))
        Self.threadsLock.unlock()
        defer {
            Self.threadsLock.lock()
            Self.threads.remove(UInt(pthread_self()))
            Self.threadsLock.unlock()
        }
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
