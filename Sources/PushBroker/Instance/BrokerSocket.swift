/// The broker's ROUTER sockets that answer peers.
public enum BrokerSocket: String, Sendable {
    case devices, control
}
