/// Why the shell could not hand a hint to libzmq.
public enum SendFailure: String, Sendable {
    /// The device's pipe is at its high-water mark (`--hint-hwm`).
    case hwm
    /// No connection with that routing id (router-mandatory): the device process is gone or reconnected.
    case unreachable
}
