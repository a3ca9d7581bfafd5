import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A fresh folder for one test, removed when the test lets go of it. Short paths, so `ipc://` endpoints fit.
public final class TempFolder {
    public let path: String

    public init() {
        var template = Array("/tmp/sls-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        path = made.map { String(cString: $0) } ?? "/tmp/sls-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        if made == nil { try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    public func file(_ name: String) -> String { path + "/" + name }
    public func ipc(_ name: String) -> String { "ipc://" + file(name) }
}
