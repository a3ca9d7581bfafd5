import CZeroMQ
import Foundation

/// A CURVE key pair as Z85 text (40 characters each), as libzmq's `zmq_curve_keypair` makes them. The secret half
/// is written only to a file its owner alone may read (`write(to:name:)`), never passed on a command line.
public struct CurveKeyPair: Sendable, Equatable {
    public let publicKey: String
    public let secretKey: String

    /// A fresh key pair from libzmq (libsodium's generator).
    public static func generate() throws -> CurveKeyPair {
        var publicText = [CChar](repeating: 0, count: 41)
        var secretText = [CChar](repeating: 0, count: 41)
        guard zmq_curve_keypair(&publicText, &secretText) == 0 else { throw ZMQError.last("curve_keypair") }
        return CurveKeyPair(publicKey: Self.text(publicText), secretKey: Self.text(secretText))
    }

    /// The pair of a secret key: its public half is derived (`zmq_curve_public`). Nil when `secretKey` is not 40
    /// characters of Z85.
    public init?(secretKey: String) {
        guard CurveKeyPair.bytes(z85: secretKey) != nil else { return nil }
        var publicText = [CChar](repeating: 0, count: 41)
        guard zmq_curve_public(&publicText, secretKey) == 0 else { return nil }
        self.init(publicKey: Self.text(publicText), secretKey: secretKey)
    }

    private init(publicKey: String, secretKey: String) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    /// 32 raw bytes of a 40-character Z85 key; nil for anything else.
    public static func bytes(z85 text: String) -> [UInt8]? {
        guard text.utf8.count == 40 else { return nil }
        var out = [UInt8](repeating: 0, count: 32)
        guard zmq_z85_decode(&out, text) != nil else { return nil }
        return out
    }

    /// Z85 text of 32 raw key bytes.
    public static func z85(_ bytes: [UInt8]) -> String {
        precondition(bytes.count == 32, "a CURVE key is 32 bytes")
        var out = [CChar](repeating: 0, count: 41)
        _ = zmq_z85_encode(&out, bytes, bytes.count)
        return text(out)
    }

    private static func text(_ chars: [CChar]) -> String {
        String(decoding: chars.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    // MARK: - Key files

    /// Writes `DIR/NAME.secret` (mode 0600, the secret key) and `DIR/NAME.public` (mode 0644, the public key), each
    /// one line of Z85 text; returns the two paths.
    @discardableResult
    public func write(to directory: String, name: String) throws -> (secret: String, public: String) {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let secretPath = "\(directory)/\(name).secret"
        let publicPath = "\(directory)/\(name).public"
        try Self.writeFile(secretPath, secretKey + "\n", mode: 0o600)
        try Self.writeFile(publicPath, publicKey + "\n", mode: 0o644)  // the umask may narrow it (a run: 0600)
        return (secretPath, publicPath)
    }

    /// The key pair in a secret key file. Refuses a file that is not one Z85 key, and one that its group or others
    /// may read (as ssh does): the error names the file and what is wrong.
    public static func read(secretFile path: String) throws(CurveKeyError) -> CurveKeyPair {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw CurveKeyError(path: path, problem: "cannot read it: \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & 0o077 == 0 else {
            let mode = String(info.st_mode & 0o777, radix: 8)
            throw CurveKeyError(path: path, problem: "a secret key file must be readable by its owner only "
                + "(mode \(mode); chmod 600 it)")
        }
        let text = try line(of: path)
        guard let pair = CurveKeyPair(secretKey: text) else {
            throw CurveKeyError(path: path, problem: "is not a CURVE secret key (40 characters of Z85)")
        }
        return pair
    }

    /// The public key in a public key file (one line of 40 Z85 characters).
    public static func read(publicFile path: String) throws(CurveKeyError) -> String {
        let text = try line(of: path)
        guard bytes(z85: text) != nil else {
            throw CurveKeyError(path: path, problem: "is not a CURVE public key (40 characters of Z85)")
        }
        return text
    }

    private static func line(of path: String) throws(CurveKeyError) -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CurveKeyError(path: path, problem: "cannot read it")
        }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static func writeFile(_ path: String, _ text: String, mode: mode_t) throws {
        // Created with the final mode (no window in which a secret is world-readable), replaced if it exists.
        unlink(path)
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, mode)
        guard fd >= 0 else { throw CurveKeyError(path: path, problem: String(cString: strerror(errno))) }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        guard Foundation.write(fd, bytes, bytes.count) == bytes.count else {
            throw CurveKeyError(path: path, problem: "short write: \(String(cString: strerror(errno)))")
        }
    }
}

/// A key file that cannot be used: the file and what is wrong with it.
public struct CurveKeyError: Error, Equatable, Sendable, CustomStringConvertible {
    public var path: String
    public var problem: String

    public init(path: String, problem: String) {
        self.path = path
        self.problem = problem
    }

    public var description: String { "\(path): \(problem)" }
}
