import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A fresh folder for one test, removed when the test lets go of it (kept when `SYNCLAB_KEEP_TEST_FOLDERS` is set, to
/// read the files of a failed test). Short paths, so `ipc://` endpoints fit a unix socket's 107 bytes.
public final class TempFolder: Sendable {
    public let path: String

    public init() {
        var template = Array("/tmp/sls-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        path = made.map { String(cString: $0) } ?? "/tmp/sls-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        if made == nil { try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
    }

    deinit {
        if ProcessInfo.processInfo.environment["SYNCLAB_KEEP_TEST_FOLDERS"] == nil {
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    public var url: URL { URL(fileURLWithPath: path) }

    /// The path of `name` inside the folder (`name` may hold slashes; nothing is created).
    public func file(_ name: String) -> String { path + "/" + name }

    /// An `ipc://` endpoint on the file `name` inside the folder.
    public func ipc(_ name: String) -> String { "ipc://" + file(name) }

    /// A folder `name` inside this one, created.
    @discardableResult
    public func folder(_ name: String) throws -> String {
        try FileManager.default.createDirectory(atPath: file(name), withIntermediateDirectories: true)
        return file(name)
    }

    /// The text of the file `name` in the folder, or "" when there is none (yet).
    public func text(_ name: String) -> String { (try? String(contentsOfFile: file(name), encoding: .utf8)) ?? "" }

    /// A folder for the whole test process (held by a static that several tests share, which is never released):
    /// removed when the process exits.
    public static func lastingTheProcess() -> TempFolder {
        let folder = TempFolder()
        ProcessFolders.shared.add(folder.path)
        return folder
    }
}

/// The folders `TempFolder.lastingTheProcess()` made, removed at exit.
private final class ProcessFolders: @unchecked Sendable {  // `paths` is guarded by `lock`
    static let shared = ProcessFolders()
    private let lock = NSLock()
    private var paths: [String] = []
    private var installed = false

    func add(_ path: String) {
        lock.withLock {
            paths.append(path)
            if !installed {
                installed = true
                atexit { ProcessFolders.shared.removeAll() }
            }
        }
    }

    func removeAll() {
        guard ProcessInfo.processInfo.environment["SYNCLAB_KEEP_TEST_FOLDERS"] == nil else { return }
        for path in lock.withLock({ paths }) { try? FileManager.default.removeItem(atPath: path) }
    }
}
