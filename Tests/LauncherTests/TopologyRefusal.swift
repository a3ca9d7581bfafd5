@testable import Launcher

/// The error `Topology.parse` gives for a text, or nil when the text reads: what every topology suite's refusal
/// tests look at (file, line, key, message), written once.
func topologyRefusal(_ text: String, file: String = "t.json5") -> TopologyError? {
    let name = file.hasSuffix(".json5") ? String(file.dropLast(6)) : file
    do {
        _ = try Topology.parse(text, file: file, defaultName: name)
        return nil
    } catch {
        return error
    }
}
