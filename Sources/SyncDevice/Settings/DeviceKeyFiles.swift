import ZeroMQ

/// The key files a device runs CURVE with (docs/SECURITY.md): its own secret key (its DEALERs' client key and its
/// control socket's server key), the server's and the broker's public keys it checks them by, and the launcher's,
/// the only key its control socket admits. Only paths: a key never appears on a command line.
public struct DeviceKeyFiles: Sendable, Equatable {
    public var keyFile: String
    public var serverKeyFile: String
    public var brokerKeyFile: String?
    public var launcherKeyFile: String?

    public init(keyFile: String, serverKeyFile: String, brokerKeyFile: String? = nil, launcherKeyFile: String? = nil) {
        self.keyFile = keyFile
        self.serverKeyFile = serverKeyFile
        self.brokerKeyFile = brokerKeyFile
        self.launcherKeyFile = launcherKeyFile
    }

    /// The keys themselves, read and checked (a secret key file must be mode 0600).
    func load() throws -> (own: CurveKeyPair, server: String, broker: String?, launcher: String?) {
        (try CurveKeyPair.read(secretFile: keyFile), try CurveKeyPair.read(publicFile: serverKeyFile),
         try brokerKeyFile.map { path throws(CurveKeyError) in try CurveKeyPair.read(publicFile: path) },
         try launcherKeyFile.map { path throws(CurveKeyError) in try CurveKeyPair.read(publicFile: path) })
    }
}
