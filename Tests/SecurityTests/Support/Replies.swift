import LabTestSupport
import SyncProtocol
import Testing

/// How long a test waits for an answer that must not come: long enough for any real reply on this machine
/// (replies take milliseconds), short enough to keep the suite quick. Never a timing assertion: a late answer
/// would still fail the test the next time it is read.
let silenceMs = 400

/// `reply` is an error reply with `code`.
func expectError(_ reply: Message?, _ code: ErrorCode, sourceLocation: SourceLocation = #_sourceLocation) {
    guard case .error(let error)? = reply else {
        Issue.record("expected the error \(code), got \(reply.map { "\($0)" } ?? "no reply")",
                     sourceLocation: sourceLocation)
        return
    }
    #expect(error.code == code, "\(error.message)", sourceLocation: sourceLocation)
}

extension SecureLab {
    /// An `error` message sent to a process: a decodable one, or a body that is not even JSON.
    static func errorFrames(decodable: Bool) -> [[UInt8]] {
        [Array("SL1 error".utf8),
         decodable ? Codec.encode(.error(ErrorReply(code: .invalid, message: "x")))[1] : Array("{".utf8)]
    }
}

extension TestClient {
    /// A hello as one of the lab's devices: its platform from `SecureLab.devices`, its own token unless `token`.
    func hello(_ device: String, _ account: String, token: String? = nil, timeoutMs: Int = 5_000) throws -> Message? {
        let platform = SecureLab.devices.first { $0.id == device }?.platform ?? .android
        return try hello(device, account, token ?? SecureLab.token(device), platform, timeoutMs: timeoutMs)
    }

    /// The reply to one request, waiting `silenceMs`: a hello as pixel, a push of one op under `opKey`, or (any other
    /// `what`) a pull; nil when none came.
    func attempt(_ what: String, opKey: String) throws -> Message? {
        switch what {
        case "hello": return try hello("pixel", "acme", timeoutMs: silenceMs)
        case "push": return try push([SecureLab.op(opKey)], timeoutMs: silenceMs)
        default: return try pull(timeoutMs: silenceMs)
        }
    }
}
