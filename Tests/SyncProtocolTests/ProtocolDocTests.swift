import Foundation
import SyncProtocol
import Testing

/// docs/PROTOCOL.md is what a client in another language is written from: its examples must be the codec's own.
@Suite("PROTOCOL.md examples")
struct ProtocolDocTests {
    /// Every `SL1 <type>` line of the doc followed by its body line.
    private func examples() throws -> [(header: String, body: String)] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let doc = try String(contentsOf: root.appendingPathComponent("docs/PROTOCOL.md"), encoding: .utf8)
        let lines = doc.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var found: [(String, String)] = []
        for (index, line) in lines.enumerated().dropLast()
        where line.hasPrefix("SL1 ") && !line.contains("{") && lines[index + 1].hasPrefix("{") {
            found.append((line, lines[index + 1]))
        }
        return found
    }

    @Test("every example decodes, and is byte for byte what the encoder writes")
    func examplesAreCanonical() throws {
        let examples = try examples()
        var types = Set<String>()
        for (header, body) in examples {
            let message = try Codec.decode([Array(header.utf8), Array(body.utf8)])
            types.insert(message.type)
            #expect(Codec.encode(message) == [Array(header.utf8), Array(body.utf8)], "\(header)")
        }
        #expect(types == Set(Message.allTypes), "types without an example: \(Set(Message.allTypes).subtracting(types))")
    }
}
