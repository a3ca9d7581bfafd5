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

    /// Runs the `synclab` executable with `arguments`, its output in a file, stopped (SIGINT, then SIGKILL) if it is
    /// still running after `limit` seconds.
    static func runSynclab(_ arguments: [String], limit: Double) throws -> (status: Int32, output: String) {
        let log = OutputFile()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "\(EndToEndTests.binDirectory)/synclab")
        process.arguments = arguments
        process.standardOutput = log.handle
        process.standardError = log.handle
        try process.run()
        let deadline = Date().addingTimeInterval(limit)
        while process.isRunning && Date() < deadline { usleep(50_000) }
        if process.isRunning {
            process.interrupt()
            usleep(2_000_000)
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        process.waitUntilExit()
        return (process.terminationStatus, log.text)
    }
}
