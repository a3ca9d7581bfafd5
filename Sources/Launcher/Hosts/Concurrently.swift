import Foundation

/// Runs `body` on every item at once, one thread each, and returns the results in the items' order: a step over
/// several hosts (a login, a copy, a clock reading) then costs about one ssh round, however many hosts there are.
func concurrently<T: Sendable, R: Sendable>(_ items: [T], _ body: @escaping @Sendable (T) -> R) -> [R] {
    let slots = Slots<R>(items.count)
    DispatchQueue.concurrentPerform(iterations: items.count) { index in slots.set(index, body(items[index])) }
    return slots.all
}

/// The results of `concurrently`, each written once by its own thread under a lock.
private final class Slots<R: Sendable>: @unchecked Sendable {
    private var values: [R?]
    private let lock = NSLock()
    init(_ count: Int) { values = Array(repeating: nil, count: count) }
    func set(_ index: Int, _ value: R) {
        lock.lock()
        values[index] = value
        lock.unlock()
    }
    var all: [R] {
        lock.lock()
        defer { lock.unlock() }
        return values.map { $0! }
    }
}
