import Foundation
import SyncProtocol

/// Outside devices (`program`, docs/DEVICE-CONTRACT.md): what a topology may ask of them.
extension Topology {
    /// A device's `program`: a non-empty list of strings whose first word is a program that exists (a path, or a
    /// name on PATH) and whose later words that look like paths name files that exist, so a typo is an exit-2 error
    /// naming the key, not a run that stops at start-up.
    static func readProgram(_ d: NodeReader) throws(TopologyError) -> [String]? {
        guard let node = d.node["program"] else { return nil }
        guard case .array = node.value, let words = try? d.stringList("program"), !words.isEmpty else {
            throw d.fail("expected a non-empty list of strings, e.g. [\"python3\", \"student/device.py\"]", at: node,
                         key: d.child("program"))
        }
        guard Self.findExecutable(words[0]) else {
            throw d.fail("cannot find the program \"\(words[0])\" (not an executable file, nor on PATH)", at: node,
                         key: d.child("program[0]"))
        }
        for (index, word) in words.enumerated().dropFirst() where word.contains("/") && !word.hasPrefix("-") {
            guard FileManager.default.fileExists(atPath: word) else {
                throw d.fail("no file \"\(word)\" (paths are relative to the directory synclab runs in)", at: node,
                             key: d.child("program[\(index)]"))
            }
        }
        return words
    }

    static func findExecutable(_ name: String) -> Bool {
        if name.contains("/") { return FileManager.default.isExecutableFile(atPath: name) }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(name)") }
    }

    /// What the lab cannot do with an outside device is refused here, by name, rather than judged silently.
    static func checkOutsideDevices(_ t: Topology, _ r: NodeReader) throws(TopologyError) {
        let outside = Set(t.devices.filter { $0.program != nil }.map(\.id))
        guard !outside.isEmpty else { return }
        func refuse(_ message: String, line: Int, key: String) -> TopologyError {
            TopologyError(file: r.file, line: line, key: key, message: message)
        }
        if t.pools > 0 {
            throw refuse("a topology with outside devices (program) cannot use pools", line: r.node["pools"]?.line ?? 1,
                         key: "pools")
        }
        if !t.placement.isLocal {
            throw refuse("outside devices (program) run on the launcher's machine only; remove \"hosts\"",
                         line: r.node["hosts"]?.line ?? 1, key: "hosts")
        }
        if t.checks.dataAgeAtOpen != nil {
            throw refuse("data-age-at-open reads the app opens of the lab's own ledger; an outside device has none "
                + "(docs/DEVICE-CONTRACT.md, \"Not supported\")", line: r.node["checks"]?.line ?? 1,
                key: "checks.dataAgeAtOpen")
        }
        // The nemesis's steps too: a `crash` generator aimed at an outside device is refused before anything runs.
        let steps = t.scenario.map { ($0, "scenario") }
            + (t.nemesis == nil ? [] : t.nemesisSchedule().steps.map { ($0, "nemesis") })
        for (step, key) in steps {
            guard case .control(let target, let command, _) = step.play.0, outside.contains(target),
                  ["crashAt", "reinstall"].contains(command)
            else { continue }
            throw refuse("\(step.action.name) is not supported for the outside device \"\(target)\" (crash points "
                + "and reinstall are the lab device's own; use kill)", line: step.line, key: key)
        }
    }
}
