/// Bounds how many `request.refused` lines a flood of bad input can write: at most `perPeer` a second for one peer
/// and `total` a second for everyone together. What it holds back is counted, and the next line it lets through for
/// that peer says how many were suppressed (`suppressed`), so the log stays bounded without hiding that a flood
/// happened. The table of peers is pruned, so a flood from many connections cannot grow it without bound either.
public struct RefusalLimiter: Sendable {
    public let perPeer: Int
    public let total: Int
    public let capacity: Int
    struct Window: Sendable {
        var second: UInt64
        var count: Int
        var suppressed: Int
    }
    var windows: [String: Window] = [:]
    var totalWindow = Window(second: 0, count: 0, suppressed: 0)
    /// Lines held back since the start, over every peer.
    public private(set) var suppressedTotal = 0

    public init(perPeer: Int = 20, total: Int = 200, capacity: Int = 4096) {
        self.perPeer = max(perPeer, 1)
        self.total = max(total, perPeer)
        self.capacity = max(capacity, 1)
    }

    /// Whether a refusal of `peer` at monotonic time `nanos` is written; when it is, how many of that peer's were
    /// suppressed before it (to be written with it).
    public mutating func admit(peer: String, nanos: UInt64) -> (write: Bool, suppressed: Int) {
        let second = nanos / 1_000_000_000
        if totalWindow.second != second { totalWindow = Window(second: second, count: 0, suppressed: 0) }
        var window = windows[peer] ?? Window(second: second, count: 0, suppressed: 0)
        if window.second != second {
            window.second = second
            window.count = 0
        }
        guard window.count < perPeer, totalWindow.count < total else {
            window.suppressed += 1
            suppressedTotal += 1
            store(peer, window, second: second)
            return (false, 0)
        }
        window.count += 1
        totalWindow.count += 1
        let suppressed = window.suppressed
        window.suppressed = 0
        store(peer, window, second: second)
        return (true, suppressed)
    }

    private mutating func store(_ peer: String, _ window: Window, second: UInt64) {
        windows[peer] = window
        guard windows.count > capacity else { return }
        // Forget peers quiet for more than a second; their held-back counts stay in `suppressedTotal`.
        windows = windows.filter { $0.value.second + 1 >= second }
        if windows.count > capacity { windows = [peer: window] }
    }
}
