/// The device's registration with the broker.
public enum BrokerLink: Sendable, Equatable {
    /// No broker endpoint: no hints.
    case disabled
    /// Sent `register`; sends it again at `retryAt` if no `registered` came.
    case registering(retryAt: Double)
    case registered
    /// The broker refused us (bad token, unknown device); tries again at `retryAt`.
    case refused(String, retryAt: Double)
}
