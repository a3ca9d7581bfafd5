import CNats
import Foundation

/// One message a subscription or a direct get returned, copied out of the client's buffer.
struct NATSMessage {
    let data: [UInt8]
}

/// A connection to nats-server with its JetStream context: the few calls the bench's NATS peer makes. Every object
/// the C client allocates is destroyed here, on every path. One connection is used by one thread.
final class NATSConnection {
    private let connection: OpaquePointer
    private let jetStream: OpaquePointer
    private var subscriptions: [OpaquePointer] = []

    /// Connects to `url`; publishes are sent at once (`SendAsap`), not batched by the client's flusher, because the
    /// bench measures latency of single messages.
    init(url: String, name: String) throws {
        var options: OpaquePointer?
        try NATSError.check("natsOptions_Create", natsOptions_Create(&options))
        defer { natsOptions_Destroy(options) }
        try NATSError.check("natsOptions_SetURL(\(url))", natsOptions_SetURL(options, url))
        try NATSError.check("natsOptions_SetName", natsOptions_SetName(options, name))
        try NATSError.check("natsOptions_SetSendAsap", natsOptions_SetSendAsap(options, true))
        try NATSError.check("natsOptions_SetTimeout", natsOptions_SetTimeout(options, 10_000))
        var made: OpaquePointer?
        try NATSError.check("natsConnection_Connect(\(url))", natsConnection_Connect(&made, options))
        guard let made else { throw NATSError("natsConnection_Connect(\(url))", NATS_ERR) }
        var js: OpaquePointer?
        let status = natsConnection_JetStream(&js, made, nil)
        guard status == NATS_OK, let js else {
            natsConnection_Destroy(made)
            throw NATSError("natsConnection_JetStream", status)
        }
        connection = made
        jetStream = js
    }

    deinit {
        for subscription in subscriptions {
            _ = natsSubscription_Unsubscribe(subscription)
            natsSubscription_Destroy(subscription)
        }
        jsCtx_Destroy(jetStream)
        natsConnection_Close(connection)
        natsConnection_Destroy(connection)
    }

    /// Creates a file-backed stream `name` on `subject`, readable with direct gets, de-duplicating message ids
    /// within `duplicateWindowSeconds`.
    func addStream(name: String, subject: String, duplicateWindowSeconds: Int) throws {
        var config = jsStreamConfig()
        try NATSError.check("jsStreamConfig_Init", jsStreamConfig_Init(&config))
        var jsError = jsErrCode(0)
        var info: UnsafeMutablePointer<jsStreamInfo>?
        let status: natsStatus = name.withCString { namePointer in
            subject.withCString { subjectPointer in
                var subjects: [UnsafePointer<CChar>?] = [subjectPointer]
                return subjects.withUnsafeMutableBufferPointer { list in
                    config.Name = namePointer
                    config.Subjects = list.baseAddress
                    config.SubjectsLen = 1
                    config.Storage = js_FileStorage
                    config.AllowDirect = true
                    config.Duplicates = Int64(duplicateWindowSeconds) * 1_000_000_000
                    return js_AddStream(&info, jetStream, &config, nil, &jsError)
                }
            }
        }
        if let info { jsStreamInfo_Destroy(info) }
        try NATSError.check("js_AddStream(\(name))", status, jsError: jsError)
    }

    /// Publishes to JetStream with `msgID` as `Nats-Msg-Id` and waits for the stream's ack: the stream sequence,
    /// and whether the server recognised the id as a duplicate (then nothing was appended).
    func publish(subject: String, data: [UInt8], msgID: String) throws -> (sequence: UInt64, duplicate: Bool) {
        var options = jsPubOptions()
        try NATSError.check("jsPubOptions_Init", jsPubOptions_Init(&options))
        var ack: UnsafeMutablePointer<jsPubAck>?
        var jsError = jsErrCode(0)
        let status = msgID.withCString { id in
            options.MsgId = id
            return data.withUnsafeBytes { bytes in
                js_Publish(&ack, jetStream, subject, bytes.baseAddress, Int32(bytes.count), &options, &jsError)
            }
        }
        defer { if let ack { jsPubAck_Destroy(ack) } }
        try NATSError.check("js_Publish(\(subject), id \(msgID))", status, jsError: jsError)
        guard let ack else { throw NATSError("js_Publish(\(subject)): no ack", NATS_ERR) }
        return (ack.pointee.Sequence, ack.pointee.Duplicate)
    }

    /// A core-NATS publish (at most once; nothing stored).
    func publishCore(subject: String, data: [UInt8]) throws {
        let status = data.withUnsafeBytes { natsConnection_Publish(connection, subject, $0.baseAddress,
            Int32($0.count)) }
        try NATSError.check("natsConnection_Publish(\(subject))", status)
    }

    /// Subscribes synchronously to `subject` and waits until the server has the subscription (a flush), so nothing
    /// published after this returns is missed. Returns the subscription's index for `next`.
    func subscribe(subject: String) throws -> Int {
        var subscription: OpaquePointer?
        try NATSError.check("natsConnection_SubscribeSync(\(subject))",
                            natsConnection_SubscribeSync(&subscription, connection, subject))
        guard let subscription else { throw NATSError("natsConnection_SubscribeSync(\(subject))", NATS_ERR) }
        subscriptions.append(subscription)
        try NATSError.check("natsConnection_FlushTimeout", natsConnection_FlushTimeout(connection, 10_000))
        return subscriptions.count - 1
    }

    /// The next message of subscription `index`, waiting up to `timeoutMs`; nil when none came.
    func next(_ index: Int, timeoutMs: Int64) throws -> NATSMessage? {
        var message: OpaquePointer?
        let status = natsSubscription_NextMsg(&message, subscriptions[index], timeoutMs)
        if status == NATS_TIMEOUT { return nil }
        defer { if let message { natsMsg_Destroy(message) } }
        try NATSError.check("natsSubscription_NextMsg", status)
        guard let message else { return nil }
        return NATSMessage(data: Self.copy(message))
    }

    /// How many messages subscription `index` has received and not yet handed out.
    func pending(_ index: Int) throws -> Int {
        var messages: Int32 = 0
        var bytes: Int32 = 0
        try NATSError.check("natsSubscription_GetPending",
            natsSubscription_GetPending(subscriptions[index], &messages, &bytes))
        return Int(messages)
    }

    /// The message at `sequence` of `stream`, by a direct get (any server answers, no consumer); nil when there is
    /// no such message.
    func directGet(stream: String, sequence: UInt64) throws -> NATSMessage? {
        var options = jsDirectGetMsgOptions()
        try NATSError.check("jsDirectGetMsgOptions_Init", jsDirectGetMsgOptions_Init(&options))
        options.Sequence = sequence
        var message: OpaquePointer?
        let status = js_DirectGetMsg(&message, jetStream, stream, nil, &options)
        defer { if let message { natsMsg_Destroy(message) } }
        if status == NATS_NOT_FOUND { return nil }
        try NATSError.check("js_DirectGetMsg(\(stream), seq \(sequence))", status)
        guard let message else { return nil }
        return NATSMessage(data: Self.copy(message))
    }

    private static func copy(_ message: OpaquePointer) -> [UInt8] {
        let count = Int(natsMsg_GetDataLength(message))
        guard count > 0, let data = natsMsg_GetData(message) else { return [] }
        return data.withMemoryRebound(to: UInt8.self,
            capacity: count) { Array(UnsafeBufferPointer(start: $0, count: count)) }
    }

    /// Releases the library's global state once every connection is destroyed.
    static func closeLibrary() {
        nats_Close()
    }
}
