import CNats

/// A failed call of the NATS C client: which call, its status text and the library's last error.
struct NATSError: Error, CustomStringConvertible {
    let call: String
    let status: natsStatus
    let detail: String

    init(_ call: String, _ status: natsStatus, jsError: jsErrCode = jsErrCode(0)) {
        self.call = call
        self.status = status
        var text = String(cString: natsStatus_GetText(status))
        var last = NATS_OK
        if let message = nats_GetLastError(&last), last == status { text += ": " + String(cString: message) }
        if jsError.rawValue != 0 { text += " (JetStream error \(jsError.rawValue))" }
        detail = text
    }

    var description: String { "nats: \(call) failed: \(detail)" }

    /// Throws unless `status` is NATS_OK.
    static func check(_ call: String, _ status: natsStatus, jsError: jsErrCode = jsErrCode(0)) throws {
        if status != NATS_OK { throw NATSError(call, status, jsError: jsError) }
    }
}
