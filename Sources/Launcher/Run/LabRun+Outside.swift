import Foundation
import LabKit
import SyncProtocol

extension LabRun {
    /// An outside device whose lab side ended because its program broke the device contract (exit 3 and a
    /// `program.failed` event, docs/DEVICE-CONTRACT.md): the run stops naming the device and what its program did.
    func outsideFailure(_ only: String? = nil) -> LabError? {
        let devices = only.map { id in outsideDevices.filter { $0 == id } } ?? outsideDevices
        for device in devices {
            guard let process = members[device]?.process, process.poll(),
                  let reason = lastLine(device, type: "program.failed")?["reason"]?.stringValue
            else { continue }
            return LabError.io("outside device \"\(device)\": its program broke the device contract: \(reason) "
                + "(its log: \(folder.logPath(for: device)))")
        }
        return nil
    }

    func watchOutside() throws {
        if let failure = outsideFailure() { throw failure }
    }

    /// The last line of `type` in `name`'s events file (its last 64 KiB).
    func lastLine(_ name: String, type: String) -> JSONValue? {
        // Read here, or over ssh from the process's host while the run lasts (LabRun+Hosts.swift).
        guard let text = eventsTail(name) else { return nil }
        for line in text.split(separator: "\n").reversed() where line.contains("\"\(type)\"") {
            if let value = try? JSONValue.parse(String(line)), value["type"]?.stringValue == type { return value }
        }
        return nil
    }

    /// The point and process of the last `process.crashing` line in `name`'s events file.
    func lastCrashing(_ name: String) -> (point: String, device: String?)? {
        guard let value = lastLine(name, type: "process.crashing"), let point = value["point"]?.stringValue else {
            return nil
        }
        return (point, value["proc"]?.stringValue)
    }

    /// Outside devices whose messages the server refused (a program that speaks PROTOCOL.md wrongly): no contract
    /// break, since the server answers `error` and changes nothing, but the report names the device and the first
    /// refusal, so a failed check is not left to guesswork.
    func outsideProtocolNotes() -> [String] {
        guard !outsideDevices.isEmpty else { return [] }
        let events = (try? RunData.readEvents(folder.eventsPath(for: "server"))) ?? []
        var refused: [String: (count: Int, first: String)] = [:]
        for event in events where event.type == EventCatalogue.requestRefused {
            guard let device = event.string("device"), outsideDevices.contains(device) else { continue }
            let words = "\(event.string("code") ?? "?"): \(event.string("message") ?? "")"
            refused[device, default: (0, words)].count += 1
        }
        // Said in every report of a run with outside devices, so no reader takes a check that does not apply to them
        // for one that held.
        let limits = "outside devices (program): \(outsideDevices.joined(separator: ", ")); their lab side plays the "
            + "platform (its execution limits too: expire, then SIGKILL after the grace) and judges them with every "
            + "check; crash points, reinstall and data-age-at-open do not apply (docs/DEVICE-CONTRACT.md)"
        return [limits] + refused.keys.sorted().map { device in
            let (count, first) = refused[device]!
            return "outside device \"\(device)\": the server refused \(count) of its message\(count == 1 ? "" : "s") "
                + "(PROTOCOL.md §6); the first: \(first)"
        } + outsideKillNotes()
    }

    /// Outside programs the lab side killed (a pass past its window and grace, a force quit mid-pass): no contract
    /// break, but a program that never answers a pass under a limit shows here, named, rather than only in events.
    func outsideKillNotes() -> [String] {
        outsideDevices.compactMap { device in
            let events = (try? RunData.readEvents(folder.eventsPath(for: device))) ?? []
            let kills = events.filter { $0.type == EventCatalogue.programKilled }
            guard let first = kills.first?.string("reason") else { return nil }
            let times = "\(kills.count) time\(kills.count == 1 ? "" : "s")"
            return "outside device \"\(device)\": its program was killed \(times) by its lab side and started again "
                + "(docs/DEVICE-CONTRACT.md, \"Execution limits\"); the first: \(first)"
        }
    }
}
