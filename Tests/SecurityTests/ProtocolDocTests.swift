import Foundation
import LabTestSupport
import SyncProtocol
import Testing

/// docs/PROTOCOL.md is a peer's only guide: its Python snippets run as written (pyzmq from PyPI, installed by
/// scripts/deps.sh) against a real server, and its error table says what the server answers for headerless frames.
@Suite struct ProtocolDocTests {
    static let protocolDoc = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../docs/PROTOCOL.md").standardized.path

    /// The ```python blocks of PROTOCOL.md, in order.
    static func pythonBlocks() throws -> [String] {
        let text = try String(contentsOfFile: protocolDoc, encoding: .utf8)
        return text.components(separatedBy: "```python\n").dropFirst().compactMap {
            $0.components(separatedBy: "```").first
        }
    }

    static let pyzmq: Bool = {
        (try? ChildProcess.run("/usr/bin/env", ["python3", "-c", "import zmq"]))?.status == 0
    }()

    /// Runs `script` with python3; its exit status and output.
    static func python(_ script: String, in folder: TempFolder) throws -> (status: Int32, output: String) {
        let path = folder.file("snippet.py")
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        return try ChildProcess.run("/usr/bin/env", ["python3", path], limit: 30)
    }

    @Test(.enabled(if: pyzmq, "pyzmq is not installed (scripts/deps.sh installs it with pip): snippets not run"))
    func thePlaintextSnippetRunsAsWritten() async throws {
        try await onOwnThread {
            let lab = try SecureLab(tcp: true, curve: false)
            let blocks = try Self.pythonBlocks()
            try #require(blocks.count >= 2, "PROTOCOL.md has \(blocks.count) python blocks")
            let script = blocks[0].replacingOccurrences(of: "tcp://127.0.0.1:5555", with: lab.serverListen)
                .replacingOccurrences(of: "t-3f9c2a", with: SecureLab.token("pixel"))
            let (status, output) = try Self.python(script, in: lab.folder)
            #expect(status == 0, "\(output)")
            #expect(output.contains("('welcome', {") && output.contains("('page', {"), "\(output)")
        }
    }

    @Test(.enabled(if: pyzmq, "pyzmq is not installed (scripts/deps.sh installs it with pip): snippets not run"))
    func theCurveSnippetRunsAsWritten() async throws {
        try await onOwnThread {
            let lab = try SecureLab(tcp: true)
            let blocks = try Self.pythonBlocks()
            try #require(blocks.count >= 2)
            // The first block's helpers (up to its first socket), the CURVE block, then the answer read.
            let helpers = blocks[0].components(separatedBy: "s = zmq.Context()").first ?? ""
            let script = (helpers + blocks[1])
                .replacingOccurrences(of: "tcp://127.0.0.1:5555", with: lab.serverListen)
                .replacingOccurrences(of: "t-3f9c2a", with: SecureLab.token("pixel"))
                .replacingOccurrences(of: "\"keys/server.public\"", with: "\"\(lab.publicFile("server"))\"")
                .replacingOccurrences(of: "\"keys/pixel\"", with: "\"\(lab.folder.file("keys/pixel"))\"")
                + "s.setsockopt(zmq.RCVTIMEO, 5000)\nprint(message(s.recv_multipart()))\n"
            let (status, output) = try Self.python(script, in: lab.folder)
            #expect(status == 0, "\(output)")
            #expect(output.contains("('welcome', {"), "\(output)")
        }
    }

    /// The error table's `badFrame` row: a frame with no header gets `bad header ""`, behind an empty delimiter when
    /// more than one frame came.
    @Test(arguments: [[[UInt8]()], [[], []], [[], [], []], [[], [], Array("{}".utf8)]])
    func headerlessFramesAreAnsweredAsTheErrorTableSays(_ frames: [[UInt8]]) async throws {
        try await onOwnThread {
            let lab = try SecureLab()
            let client = try lab.serverClient(as: "pixel")
            try client.sendRaw(frames)
            guard let reply = try client.receiveFrames(timeoutMs: 5_000) else {
                Issue.record("no answer")
                return
            }
            let delimited = frames.count > 1
            #expect(reply.count == (delimited ? 3 : 2) && (!delimited || reply[0].isEmpty), "\(reply.count) frames")
            guard case .error(let error) = try Codec.decode(Array(reply.suffix(2))) else {
                Issue.record("not an error")
                return
            }
            #expect(error.code == .badFrame && error.message.contains("bad header \"\""), "\(error)")
        }
    }
}
