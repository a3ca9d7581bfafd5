import Foundation

/// This process's own memory from /proc/self/status: the launcher's, for the report's cost section (a run of 10,000
/// devices holds its events and the verdict's tables in the launcher, which is what would run out first).
package enum OwnMemory {
    /// A field of /proc/self/status (`VmRSS`: now, `VmHWM`: the peak so far) in MB; nil where /proc is not there.
    package static func mb(_ field: String) -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            return line.split(separator: " ").compactMap { Double($0) }.first.map { $0 / 1024 }
        }
        return nil
    }
}
