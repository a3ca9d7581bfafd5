import SyncProtocol

/// The bytes of event lines being written: `EventLog` keeps its pending lines in one, and hands it to the closure of
/// `emit(_:_:)`, which adds a line's fields straight into it. No field list is built and each append is a store or a
/// copy into memory already there: an event line costs a few hundred instructions, not thousands.
///
/// Keys are static strings, plain ASCII names (`hint`, `waitedSec`) written as they are, without escaping.
/// Not copyable: it owns its memory, and a copy kept past the closure would write where nobody reads.
public struct EventFields: ~Copyable {
    private(set) var base: UnsafeMutablePointer<UInt8>
    private(set) var count = 0
    private var capacity: Int
    /// The last stamp's bytes, for `appendStamp`: `{"wall":<wall ÷ 1000>` at 0 and `,"sim":<sim>` at 32.
    private let stamp: UnsafeMutablePointer<UInt8>
    private var stampMillis = Int.min
    private var stampHeadCount = 0
    private var stampSimMillis = Int.min
    private var stampSimCount = 0

    init(capacity: Int = 4096) {
        self.capacity = capacity
        base = .allocate(capacity: capacity)
        stamp = .allocate(capacity: 64)
    }

    deinit {
        base.deallocate()
        stamp.deallocate()
    }

    /// Adds a field rendered once (`,"device":"p3"`): one copy.
    public mutating func add(_ fragment: EventFragment) {
        append(fragment.bytes)
    }

    /// Adds fields rendered once that end with a key (`EventFragment(_:then:)`), then `value` as that key's.
    public mutating func add(_ fragment: EventFragment, _ value: Int) {
        append(fragment.bytes)
        appendInteger(value)
    }

    /// Adds `,"key":"<prefix><number>"` (a hint's id `h-17` from its number), as `add(key, "\(prefix)\(number)")`
    /// writes it: the prefix is a plain name, so nothing needs escaping.
    public mutating func add(_ key: StaticString, prefix: StaticString, _ number: Int) {
        assert(Self.isPlainName(key) && Self.isPlainName(prefix), "\(key), \(prefix) must be plain ASCII names")
        // `,"key":"prefix` with one check for room.
        let keyLength = key.utf8CodeUnitCount, prefixLength = prefix.utf8CodeUnitCount
        reserve(keyLength + prefixLength + 26)
        base[count] = UInt8(ascii: ",")
        base[count + 1] = UInt8(ascii: "\"")
        (base + count + 2).update(from: key.utf8Start, count: keyLength)
        var at = count + 2 + keyLength
        base[at] = UInt8(ascii: "\"")
        base[at + 1] = UInt8(ascii: ":")
        base[at + 2] = UInt8(ascii: "\"")
        at += 3
        (base + at).update(from: prefix.utf8Start, count: prefixLength)
        count = at + prefixLength
        appendInteger(number)
        base[count] = UInt8(ascii: "\"")
        count += 1
    }

    /// `{"wall":<wall>,"sim":<simMillis ÷ 1000>`, as `appendInteger` and `EventLog.writeSim` spell them. Lines come
    /// many to a millisecond: the wall's digits but the last three, and the whole sim part, are copied from the
    /// previous line's when they are the same.
    mutating func appendStamp(wall: Int, simMillis: Double) {
        guard wall >= 1_000_000, simMillis.isFinite, abs(simMillis) < 1e12 else {
            appendStatic("{\"wall\":")
            appendInteger(wall)
            appendStatic(",\"sim\":")
            EventLog.writeSim(simMillis, to: &self)
            return
        }
        let millis = wall / 1000
        if millis == stampMillis {
            reserve(stampHeadCount)
            (base + count).update(from: stamp, count: stampHeadCount)
            count += stampHeadCount
        } else {
            let start = count
            appendStatic("{\"wall\":")
            appendInteger(millis)
            stampHeadCount = count - start
            stamp.update(from: base + start, count: stampHeadCount)
            stampMillis = millis
        }
        // The last three digits, zeros kept: `millis` has digits of its own before them.
        let micros = wall % 1000
        reserve(3)
        base[count] = UInt8(ascii: "0") + UInt8(micros / 100)
        base[count + 1] = UInt8(ascii: "0") + UInt8(micros / 10 % 10)
        base[count + 2] = UInt8(ascii: "0") + UInt8(micros % 10)
        count += 3
        let sim = Int(simMillis)
        if sim == stampSimMillis {
            reserve(stampSimCount)
            (base + count).update(from: stamp + 32, count: stampSimCount)
            count += stampSimCount
        } else {
            let start = count
            appendStatic(",\"sim\":")
            appendThousandths(sim)
            stampSimCount = count - start
            (stamp + 32).update(from: base + start, count: stampSimCount)
            stampSimMillis = sim
        }
    }

    /// Adds `,"key":"value"`.
    public mutating func add(_ key: StaticString, _ value: String) {
        appendKey(key)
        appendString(value)
    }

    /// Adds `,"key":value`.
    public mutating func add(_ key: StaticString, _ value: Int) {
        appendKey(key)
        appendInteger(value)
    }

    /// Adds `,"key":true` or `false`.
    public mutating func add(_ key: StaticString, _ value: Bool) {
        appendKey(key)
        value ? appendStatic("true") : appendStatic("false")
    }

    /// Adds `,"key":value`, the number as `JSONValue.double(value)` writes it.
    public mutating func add(_ key: StaticString, _ value: Double) {
        appendKey(key)
        appendDouble(value)
    }

    /// Adds `,"key":value`, as `JSONValue.write(to:)` writes it.
    public mutating func add(_ key: StaticString, _ value: JSONValue) {
        appendKey(key)
        appendValue(value)
    }

    // MARK: - Writing

    /// The bytes written so far from `start` on.
    func bytes(from start: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: base + start, count: count - start)
    }

    mutating func removeAll() { count = 0 }

    @inline(__always)
    private mutating func reserve(_ extra: Int) {
        if count + extra > capacity { grow(to: count + extra) }
    }

    private mutating func grow(to needed: Int) {
        let newCapacity = max(needed, capacity * 2)
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.update(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress else { return }
        reserve(bytes.count)
        (base + count).update(from: source, count: bytes.count)
        count += bytes.count
    }

    mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { append($0) }
    }

    /// `}` and the newline that end every line.
    mutating func appendLineEnd() {
        reserve(2)
        base[count] = UInt8(ascii: "}")
        base[count + 1] = UInt8(ascii: "\n")
        count += 2
    }

    mutating func appendStatic(_ text: StaticString) {
        append(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// `,"key":`, the key as it is: a static name needs no escaping.
    mutating func appendKey(_ key: StaticString) {
        assert(Self.isPlainName(key), "event field key \(key) must be a plain ASCII name")
        let length = key.utf8CodeUnitCount
        reserve(length + 4)
        base[count] = UInt8(ascii: ",")
        base[count + 1] = UInt8(ascii: "\"")
        (base + count + 2).update(from: key.utf8Start, count: length)
        base[count + 2 + length] = UInt8(ascii: "\"")
        base[count + 3 + length] = UInt8(ascii: ":")
        count += length + 4
    }

    /// `,"key":` for a key known only at run time, escaped as a JSON string.
    mutating func appendKey(_ key: String) {
        append(UInt8(ascii: ","))
        appendString(key)
        append(UInt8(ascii: ":"))
    }

    /// A JSON string, as `JSONValue.writeString` writes it.
    mutating func appendString(_ value: String) {
        var value = value
        let plain = value.withUTF8 { utf8 in
            if utf8.count <= 24 { return appendShortPlain(utf8) }
            guard JSONValue.isPlainString(utf8) else { return false }
            reserve(utf8.count + 2)
            base[count] = UInt8(ascii: "\"")
            if let source = utf8.baseAddress { (base + count + 1).update(from: source, count: utf8.count) }
            base[count + 1 + utf8.count] = UInt8(ascii: "\"")
            count += utf8.count + 2
            return true
        }
        guard !plain else { return }
        var escaped: [UInt8] = []
        JSONValue.writeString(value, to: &escaped)
        append(escaped)
    }

    /// `utf8` between quotes when no byte of it needs escaping, checked while copying (an id, a device name: shorter
    /// than the eight-byte test's setup is worth); false, nothing written, when one does.
    private mutating func appendShortPlain(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        reserve(utf8.count + 2)
        let out = base + count
        out[0] = UInt8(ascii: "\"")
        for index in 0..<utf8.count {
            let byte = utf8[index]
            guard byte >= 0x20 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") else { return false }
            out[index + 1] = byte
        }
        out[utf8.count + 1] = UInt8(ascii: "\"")
        count += utf8.count + 2
        return true
    }

    /// Decimal digits of `value`, as `String(value)` spells them: two digits at a time, from `digitPairs`.
    mutating func appendInteger(_ value: Int) {
        reserve(20)
        if value < 0 {
            base[count] = UInt8(ascii: "-")
            count += 1
        }
        var magnitude = value.magnitude
        // The number of digits by halving steps: a 16-digit `wall` takes five comparisons, not sixteen.
        var digits = 1
        var high = magnitude
        if high >= 10_000_000_000_000_000 {
            digits += 16
            high /= 10_000_000_000_000_000
        }
        if high >= 100_000_000 {
            digits += 8
            high /= 100_000_000
        }
        if high >= 10_000 {
            digits += 4
            high /= 10_000
        }
        if high >= 100 {
            digits += 2
            high /= 100
        }
        if high >= 10 { digits += 1 }
        var index = count + digits
        count = index
        let pairs = Self.digitPairs.utf8Start
        while magnitude >= 10 {
            let pair = Int(magnitude % 100) &* 2
            magnitude /= 100
            index -= 2
            base[index] = pairs[pair]
            base[index + 1] = pairs[pair + 1]
            if magnitude == 0 { return }
        }
        base[index - 1] = UInt8(ascii: "0") + UInt8(magnitude)
    }

    /// "00", "01", … "99": the two digits of every number below 100, in one static string (no lazy global).
    private static var digitPairs: StaticString {
        """
        00010203040506070809101112131415161718192021222324252627282930313233343536373839\
        40414243444546474849505152535455565758596061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899
        """
    }

    /// `thousandths / 1000` in decimal, trailing zeros left out, as `String(Double)` spells it: "12.5", "-0.035".
    mutating func appendThousandths(_ thousandths: Int) {
        if thousandths < 0 && thousandths > -1000 { append(UInt8(ascii: "-")) }
        appendInteger(thousandths / 1000)
        var fraction = abs(thousandths % 1000)
        guard fraction != 0 else { return }
        reserve(4)
        base[count] = UInt8(ascii: ".")
        count += 1
        var divisor = 100
        while fraction != 0 {
            base[count] = UInt8(ascii: "0") + UInt8(fraction / divisor)
            count += 1
            fraction %= divisor
            divisor /= 10
        }
    }

    /// `v` as `JSONValue.double(v).write(to:)` writes it.
    mutating func appendDouble(_ v: Double) {
        // `Int(exactly:)` rather than `v == v.rounded()`: the same whole numbers (-0.0 among them), with no call to
        // libm's `round` (a waited time is most often 0).
        if abs(v) < 1e15, let whole = Int(exactly: v) {
            appendInteger(whole)
        } else if v.isFinite, let thousandths = JSONValue.exactThousandths(v) {
            appendThousandths(thousandths)
        } else {
            var bytes: [UInt8] = []
            JSONValue.double(v).write(to: &bytes)
            append(bytes)
        }
    }

    /// `value` as `JSONValue.write(to:)` writes it; the common cases without building a byte array.
    mutating func appendValue(_ value: JSONValue) {
        switch value {
        case .null: appendStatic("null")
        case .bool(let v): v ? appendStatic("true") : appendStatic("false")
        case .int(let v): appendInteger(v)
        case .double(let v): appendDouble(v)
        case .string(let v): appendString(v)
        case .array(let items):
            append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { append(UInt8(ascii: ",")) }
                appendValue(item)
            }
            append(UInt8(ascii: "]"))
        case .object(let pairs):
            append(UInt8(ascii: "{"))
            for (index, pair) in pairs.enumerated() {
                if index > 0 { append(UInt8(ascii: ",")) }
                appendString(pair.0)
                append(UInt8(ascii: ":"))
                appendValue(pair.1)
            }
            append(UInt8(ascii: "}"))
        }
    }

    /// True when `name` is made of ASCII letters, digits, `.`, `_` and `-` only: nothing a JSON string escapes.
    static func isPlainName(_ name: StaticString) -> Bool {
        UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount).allSatisfy { byte in
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
    }
}

/// Fields rendered once, `,"key":value…`, for values that recur in many lines (a registered device's id):
/// `EventFields.add(_:)` copies them instead of checking and quoting the strings every time.
public struct EventFragment: Sendable, Equatable {
    let bytes: [UInt8]

    /// `,"key":value` for each field in order, as `JSONValue`'s writer spells them (a notice's `origin` and `seqs`);
    /// with `then`, a last `,"then":` whose value the line adds (`EventFields.add(_:_:)`: a hint's head).
    public init(_ fields: [(String, JSONValue)], then key: StaticString? = nil) {
        var bytes: [UInt8] = []
        for (key, value) in fields {
            bytes.append(UInt8(ascii: ","))
            JSONValue.writeString(key, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            value.write(to: &bytes)
        }
        if let key {
            assert(EventFields.isPlainName(key), "event field key \(key) must be a plain ASCII name")
            bytes.append(contentsOf: ",\"".utf8)
            bytes.append(contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
            bytes.append(contentsOf: "\":".utf8)
        }
        self.bytes = bytes
    }
}
