extension Socket {
    /// The next message's frames within `timeoutMs`, polling this socket alone; nil when nothing came by then. For
    /// a client that waits for one answer (the tests' device-protocol clients); a process's loop polls all its
    /// sockets with its own `Poller`.
    public func receive(timeoutMs: Int) throws -> [Frame]? {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .milliseconds(timeoutMs))
        var poller = Poller([self])
        while true {
            let left = clock.now.duration(to: deadline)
            guard left > .zero else { return nil }
            let ready = try poller.poll(timeoutMs: Int(left.components.seconds * 1000
                + left.components.attoseconds / 1_000_000_000_000_000) + 1)
            if !ready.isEmpty, let frames = try receive(dontWait: true) { return frames }
        }
    }
}
