import Foundation

/// Where the package's executables are: `SYNCLAB_BIN` if set, else the folder of the running test binary or one
/// above it (on macOS the binary sits inside an .xctest bundle).
public enum Binaries {
    /// The path of the executable `name`.
    public static func path(_ name: String) throws -> String {
        try folder(holding: name) + "/" + name
    }

    /// The folder holding the executable `name` (what `synclab run --bin` takes).
    public static func folder(holding name: String = "synclab") throws -> String {
        let folders = candidates
        for folder in folders where FileManager.default.isExecutableFile(atPath: folder + "/" + name) {
            return folder
        }
        throw TestFailure.setup("no \(name) next to the tests (looked in \(folders)): build it first "
            + "(swift build --product \(name)) or set SYNCLAB_BIN")
    }

    private static var candidates: [String] {
        var folders: [String] = []
        if let folder = ProcessInfo.processInfo.environment["SYNCLAB_BIN"] { folders.append(folder) }
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        for start in [binary.deletingLastPathComponent(), Bundle.main.bundleURL] {
            var url = start
            for _ in 0..<3 {
                folders.append(url.path)
                url.deleteLastPathComponent()
            }
        }
        var seen: Set<String> = []
        return folders.filter { seen.insert($0).inserted }
    }
}
