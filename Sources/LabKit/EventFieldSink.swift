import SyncProtocol

/// Where a typed event puts its fields, in order: straight into the bytes of an event line (`EventFields`, a real
/// process's `EventLog`) or into a field list (`EventFieldList`: the simulation's log, the tests, `EventLine`). A
/// typed event writes its fields once, generically over the sink, so the two spellings cannot differ.
public protocol EventFieldSink: ~Copyable {
    mutating func add(_ key: StaticString, _ value: String)
    mutating func add(_ key: StaticString, _ value: Int)
    mutating func add(_ key: StaticString, _ value: Bool)
    mutating func add(_ key: StaticString, _ value: Double)
    /// `,"key":["a","b"]`.
    mutating func add(_ key: StaticString, strings: [String])
}

extension EventFields: EventFieldSink {
    public mutating func add(_ key: StaticString, strings: [String]) {
        appendKey(key)
        append(UInt8(ascii: "["))
        for (index, string) in strings.enumerated() {
            if index > 0 { append(UInt8(ascii: ",")) }
            appendString(string)
        }
        append(UInt8(ascii: "]"))
    }
}

/// A typed event's fields as the list an `EventLine` holds.
public struct EventFieldList: EventFieldSink {
    public private(set) var fields: [(String, JSONValue)] = []

    /// Room for the fields of any pass event, so the list is allocated once.
    public init() { fields.reserveCapacity(12) }

    public mutating func add(_ key: StaticString, _ value: String) { fields.append((Self.name(key), .string(value))) }
    public mutating func add(_ key: StaticString, _ value: Int) { fields.append((Self.name(key), .int(value))) }
    public mutating func add(_ key: StaticString, _ value: Bool) { fields.append((Self.name(key), .bool(value))) }
    public mutating func add(_ key: StaticString, _ value: Double) { fields.append((Self.name(key), .double(value))) }

    public mutating func add(_ key: StaticString, strings: [String]) {
        fields.append((Self.name(key), .array(strings.map { .string($0) })))
    }

    /// A key as a `String` (a short one is held inline, with no allocation).
    private static func name(_ key: StaticString) -> String {
        key.withUTF8Buffer { String(decoding: $0, as: UTF8.self) }
    }
}

/// A typed event's fields written onto a byte array as `JSONValue.write(to:)` writes them: the simulation's log.
public struct EventBytes: EventFieldSink {
    public var bytes: [UInt8]

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public mutating func add(_ key: StaticString, _ value: String) {
        appendKey(key)
        JSONValue.writeString(value, to: &bytes)
    }

    public mutating func add(_ key: StaticString, _ value: Int) {
        appendKey(key)
        JSONValue.writeInteger(value, to: &bytes)
    }

    public mutating func add(_ key: StaticString, _ value: Bool) {
        appendKey(key)
        bytes.append(contentsOf: value ? "true".utf8 : "false".utf8)
    }

    public mutating func add(_ key: StaticString, _ value: Double) {
        appendKey(key)
        JSONValue.double(value).write(to: &bytes)
    }

    public mutating func add(_ key: StaticString, strings: [String]) {
        appendKey(key)
        bytes.append(UInt8(ascii: "["))
        for (index, string) in strings.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            JSONValue.writeString(string, to: &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// `,"key":` (a key is a plain name: nothing to escape).
    private mutating func appendKey(_ key: StaticString) {
        assert(EventFields.isPlainName(key), "\(key) must be a plain ASCII name")
        bytes.append(UInt8(ascii: ","))
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }
}
