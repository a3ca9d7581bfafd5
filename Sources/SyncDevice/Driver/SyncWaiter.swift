import SyncProtocol

/// Who waits for a `sync`'s pass to end: a control peer (answered with a `controlAck` carrying the status), or the
/// device's pool gathering a `syncAll` (handed the status data).
public enum SyncWaiter {
    case control(peer: [UInt8], req: Int)
    case pool((JSONValue) -> Void)
}
