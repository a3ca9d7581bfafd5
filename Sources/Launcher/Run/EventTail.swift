import Foundation
import LabKit

/// Follows the per-process event files while a run goes on, counting what the progress line shows, without parsing
/// every line as JSON: the type is found by its fixed position after `"type":"`.
final class EventTail {
    private var offsets: [String: UInt64] = [:]
    private var partial: [String: [UInt8]] = [:]
    private(set) var events = 0
    private(set) var saved = 0
    private(set) var resolved = 0
    private(set) var hintsLost = 0
    private(set) var hintsDelivered = 0
    private(set) var passes = 0

    var pending: Int { max(0, saved - resolved) }

    func update(files: [String]) {
        for path in files {
            guard let handle = FileHandle(forReadingAtPath: path) else { continue }
            defer { try? handle.close() }
            let offset = offsets[path] ?? 0
            try? handle.seek(toOffset: offset)
            guard let data = try? handle.readToEnd(), !data.isEmpty else { continue }
            offsets[path] = offset + UInt64(data.count)
            var bytes = partial[path] ?? []
            bytes.append(contentsOf: data)
            var start = 0
            for index in bytes.indices where bytes[index] == 0x0A {
                count(line: bytes[start..<index])
                start = index + 1
            }
            partial[path] = Array(bytes[start...])
        }
    }

    private static let marker = Array("\"type\":\"".utf8)

    private func count(line: ArraySlice<UInt8>) {
        events += 1
        guard let type = EventTail.type(of: line) else { return }
        switch type {
        case EventCatalogue.opSaved: saved += 1
        case EventCatalogue.opResult:
            // Only final outcomes resolve an op; retries and unknown outcomes keep it pending.
            if line.containsSequence("\"outcome\":\"acknowledged\"")
                || line.containsSequence("\"outcome\":\"needsAttention\"") {
                resolved += 1
            }
        case EventCatalogue.hintDropped, EventCatalogue.hintDiscarded, EventCatalogue.hintExpired,
            EventCatalogue.hintThrottled, EventCatalogue.hintCoalesced: hintsLost += 1
        case EventCatalogue.hintDelivered: hintsDelivered += 1
        case EventCatalogue.passStart: passes += 1
        default: break
        }
    }

    static func type(of line: ArraySlice<UInt8>) -> String? {
        guard let range = line.firstRange(of: marker) else { return nil }
        let start = range.upperBound
        guard let end = line[start...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
        return String(decoding: line[start..<end], as: UTF8.self)
    }
}

extension ArraySlice where Element == UInt8 {
    func containsSequence(_ text: String) -> Bool { firstRange(of: Array(text.utf8)) != nil }
}
