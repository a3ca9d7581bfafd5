/// The simulation's one clock and its agenda: a priority queue of actions ordered by (virtual time, insertion number),
/// so two actions due at the same µs run in the order they were scheduled, never in an order a hash decides.
/// Single-threaded: everything a simulated run does happens inside `run(until:)`.
public final class SimScheduler {
    /// Virtual µs since the run's epoch (negative before the scenario starts).
    public private(set) var now: Int64
    private var heap: [Entry] = []
    private var nextNumber: UInt64 = 0
    /// How many actions have run, for the scale figures.
    public private(set) var actionsRun = 0

    struct Entry {
        let time: Int64
        let number: UInt64
        let action: () -> Void

        func before(_ other: Entry) -> Bool { (time, number) < (other.time, other.number) }
    }

    public init(start: Int64) { now = start }

    /// Runs `action` at virtual µs `time` (now, if `time` is in the past).
    public func at(_ time: Int64, _ action: @escaping () -> Void) {
        let entry = Entry(time: max(time, now), number: nextNumber, action: action)
        nextNumber += 1
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].before(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// Runs `action` `delay` µs from now.
    public func after(_ delay: Int64, _ action: @escaping () -> Void) { at(now + max(0, delay), action) }

    /// The time of the next action, nil when nothing is scheduled.
    public var nextTime: Int64? { heap.first?.time }

    /// Runs every action due at or before `time` (including those they schedule), then sets the clock to `time`.
    /// Stops early, with the clock at the last action's time, as soon as `done` says so.
    public func run(until time: Int64, done: () -> Bool = { false }) {
        while let first = heap.first, first.time <= time {
            if done() { return }
            let entry = pop()
            now = entry.time
            actionsRun += 1
            entry.action()
        }
        if done() { return }
        now = max(now, time)
    }

    private func pop() -> Entry {
        let top = heap[0]
        let last = heap.removeLast()
        guard !heap.isEmpty else { return top }
        heap[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count && heap[left].before(heap[smallest]) { smallest = left }
            if right < heap.count && heap[right].before(heap[smallest]) { smallest = right }
            if smallest == parent { break }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
        return top
    }
}
