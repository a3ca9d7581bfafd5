/// One device of a peer, living on its own thread: how it sends an edit and how it learns of and pulls others'.
protocol PeerDevice: AnyObject {
    /// Sends a saved edit with its key as the idempotency key and waits for the server's durable append; returns
    /// the reference the server gave it (a stream sequence or id).
    func send(_ change: PeerChange) throws -> String
    /// Waits up to `timeoutMs` for hints and takes every one already here; false when none came.
    func awaitHints(timeoutMs: Int32) throws -> Bool
    /// The changes after `cursor` (nil: from the start) and the cursor after them.
    func pull(after cursor: String?) throws -> (changes: [PeerChange], cursor: String?)
}
