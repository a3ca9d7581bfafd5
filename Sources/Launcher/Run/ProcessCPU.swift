import Foundation

/// CPU time a running process has used, from /proc/PID/stat (Linux).
package enum ProcessCPU {
    /// User + system seconds, nil when the process or /proc is not there.
    package static func seconds(pid: pid_t) -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")")
        else { return nil }
        // The command name (field 2) may hold spaces; fields after its closing parenthesis start at field 3 (state).
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        return ticks > 0 ? (user + system) / ticks : nil
    }
}
