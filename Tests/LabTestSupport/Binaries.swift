import Foundation

/// Where the package's executables are: `SYNCLAB_BIN` if set, else next to the running test binary.
public enum Binaries {
    public static func path(_ name: String) throws -> String {
        var folders: [URL] = []
        if let folder = ProcessInfo.processInfo.environment["SYNCLAB_BIN"] {
            folders.append(URL(fileURLWithPath: folder))
        }
        folders.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
        var bundle = Bundle.main.bundleURL
        for _ in 0..<3 {
            folders.append(bundle)
            bundle = bundle.deletingLastPathComponent()
        }
        for folder in folders {
            let candidate = folder.appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw TestFailure.setup("no \(name) next to the tests (looked in \(folders.map(\.path))): build it first "
            + "(swift build --product \(name)) or set SYNCLAB_BIN")
    }
}

/// A test could not set up what it needs (a missing executable, a child that would not start).
public enum TestFailure: Error, CustomStringConvertible {
    case setup(String)
    public var description: String {
        switch self {
        case .setup(let text): return text
        }
    }
}
