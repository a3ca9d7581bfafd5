import CZeroMQ

/// A failed libzmq call: the errno, libzmq's own text, the call that failed and, where there is one, the endpoint.
public struct ZMQError: Error, CustomStringConvertible, Sendable, Equatable {
    public let code: Int32
    public let message: String
    public let operation: String
    public let endpoint: String?

    public init(code: Int32, operation: String, endpoint: String? = nil) {
        self.code = code
        self.message = String(cString: zmq_strerror(code))
        self.operation = operation
        self.endpoint = endpoint
    }

    /// The context was terminated: the owner of the socket should close it and stop, cleanly.
    public var isTerminated: Bool { code == ETERM }

    public var description: String {
        if let endpoint {
            return "zmq \(operation) \(endpoint): \(message) (errno \(code))"
        }
        return "zmq \(operation): \(message) (errno \(code))"
    }

    static func last(_ operation: String, endpoint: String? = nil) -> ZMQError {
        ZMQError(code: zmq_errno(), operation: operation, endpoint: endpoint)
    }
}
