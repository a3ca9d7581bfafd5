import ZeroMQ

/// The broker and control sockets a device process opens, set up once for the lab's device (`DeviceShell`) and an
/// outside device's lab side (`ProgramShell`; the pool's control too): a 50 ms reconnect, CURVE with the
/// device's own key when the run has keys (the broker's public key, the launcher's for control).
enum DeviceSockets {
    /// A DEALER to the broker (no routing id of its own: the broker's ZAP handler gives each connection one), or nil
    /// when the device runs without one.
    static func broker(_ context: Context, endpoint: String?, own: CurveKeyPair?, brokerKey: String?) throws
        -> Socket?
    {
        guard let endpoint else { return nil }
        let socket = try Socket(context, .dealer)
        try socket.setReconnectInterval(ms: 50)
        if let own, let brokerKey { try socket.setCurveClient(own, serverKey: brokerKey) }
        try socket.connect(endpoint)
        return socket
    }

    /// The control ROUTER, bound, in ZAP domain "control" when the run has keys; nil without an endpoint.
    static func control(_ context: Context, endpoint: String?, own: CurveKeyPair?) throws -> Socket? {
        guard let endpoint else { return nil }
        return try Socket.boundRouter(context, endpoint: endpoint, security: own, domain: "control")
    }
}
