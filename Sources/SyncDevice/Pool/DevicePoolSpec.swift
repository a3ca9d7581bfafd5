import Foundation

/// The devices one pool process hosts (`synclab-device pool --spec FILE`), read from JSON:
/// `{"devices": [{"id", "account", "token", "platform", "db", "engagement"?, "startState"?, "charging"?, "flags"?}]}`.
/// Everything else (endpoints, clock, settings) is given once on the pool's command line and shared.
public struct DevicePoolSpec: Codable, Sendable, Equatable {
    public struct Device: Codable, Sendable, Equatable {
        public var id: String
        public var account: String
        /// The token itself, or (`tokenFile`) a file holding it; one of the two.
        public var token: String?
        public var tokenFile: String?
        /// CURVE: the device's own secret key file (mode 0600); every pooled device has a key of its own.
        public var keyFile: String?
        public var platform: String
        /// The device's own SQLite ledger, the same schema as a separate device process's.
        public var db: String
        /// App opens per simulated day (default 4, as `--engagement` and a topology's `engagement`).
        public var engagement: Double?
        /// foreground, background or closed (default background, as `--start-state`).
        public var startState: String?
        public var charging: Bool?
        /// This device's own values of device settings, flag name → flag text (`{"batch": "10"}`), over the
        /// pool's command line: how a topology gives one pooled device a setting of its own.
        public var flags: [String: String]?

        public init(id: String, account: String, token: String?, platform: String, db: String,
                    engagement: Double? = nil, startState: String? = nil, charging: Bool? = nil,
                    tokenFile: String? = nil, keyFile: String? = nil, flags: [String: String]? = nil) {
            self.tokenFile = tokenFile
            self.keyFile = keyFile
            self.id = id
            self.account = account
            self.token = token
            self.platform = platform
            self.db = db
            self.engagement = engagement
            self.startState = startState
            self.charging = charging
            self.flags = flags
        }
    }

    public var devices: [Device]

    public init(devices: [Device]) {
        self.devices = devices
    }

    /// Reads a spec file; the error names the file and what is wrong with it.
    public static func read(path: String) throws -> DevicePoolSpec {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw DeviceError.badPoolSpec(path: path, reason: "cannot read it: \(error.localizedDescription)")
        }
        let spec: DevicePoolSpec
        do {
            let decoder = JSONDecoder()
            decoder.allowsJSON5 = true
            spec = try decoder.decode(DevicePoolSpec.self, from: data)
        } catch {
            throw DeviceError.badPoolSpec(path: path, reason: "\(error)")
        }
        guard !spec.devices.isEmpty else { throw DeviceError.badPoolSpec(path: path, reason: "\"devices\" is empty") }
        var seen: Set<String> = []
        for device in spec.devices where !seen.insert(device.id).inserted {
            throw DeviceError.badPoolSpec(path: path, reason: "device \"\(device.id)\" is listed twice")
        }
        for device in spec.devices {
            for flag in (device.flags
                ?? [:]).keys.sorted() where !DeviceSettings.knobs.contains(where: { $0.flag == flag }) {
                throw DeviceError.badPoolSpec(path: path,
                                              reason: "device \"\(device.id)\": \"\(flag)\" in \"flags\" is not a "
                                                  + "device setting")
            }
        }
        return spec
    }

    /// JSON text of the spec, as the launcher writes it.
    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(self)
    }
}
