import Foundation

/// Where a child process's output goes in these tests: a temporary file, never a pipe. A pipe that fills up (64 KiB)
/// while the test waits for the child to exit blocks the child, and the wait never ends.
final class OutputFile {
    let url: URL
    let handle: FileHandle

    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("synclab-out-\(UUID().uuidString).txt")
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        handle = (try? FileHandle(forWritingTo: url)) ?? FileHandle.nullDevice
    }

    deinit {
        try? handle.close()
        try? FileManager.default.removeItem(at: url)
    }

    var text: String { (try? String(contentsOf: url, encoding: .utf8)) ?? "" }

    /// The command lines of every process on the machine.
    static func processCommandLines() -> [String] {
        let output = OutputFile()
        let ps = Process()
        ps.executableURL = URL(fileURLWithPath: "/bin/ps")
        ps.arguments = ["-eo", "args"]
        ps.standardOutput = output.handle
        guard (try? ps.run()) != nil else { return [] }
        ps.waitUntilExit()
        return output.text.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("/bin/ps") }
    }
}
