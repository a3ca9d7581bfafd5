import LabKit
import SyncProtocol

extension Topology {
    func platform(of device: String) -> Platform? { devices.first { $0.id == device }?.platform }

    /// The scenario with every behaviour generator expanded into concrete steps (seeded: the same seed gives the
    /// same timeline), sorted by time. A session is: open, edits spread over the session, background. A share
    /// `deleteShare` of the edits delete a draft the device wrote before; their draws come from a generator of their
    /// own, so turning deletes on or off changes no other step.
    public func timeline() -> [ScenarioStep] {
        var steps = scenario
        // Looked up once: `platform(of:)` walks every device, which for thousands of devices, once per session, was
        // most of a big topology's start.
        var platforms: [String: Platform] = [:]
        for account in accounts { for device in account.devices { platforms[device.id] = device.platform } }
        for behaviour in behaviours {
            for device in behaviour.devices {
                let stream = behaviour.users ?? "\(behaviour.line)"
                var generator = SeededGenerator.derived(seed: seed, name: "behaviour/\(device)/\(stream)")
                var deletes = SeededGenerator.derived(seed: seed, name: "behaviour-delete/\(device)/\(stream)")
                var written: Set<String> = []
                guard behaviour.opensPerDay > 0 else { continue }
                let meanGap = 86_400 / behaviour.opensPerDay
                let session = behaviour.sessionMinutes * 60
                var t = generator.exponential(mean: meanGap)
                var editNumber = 0
                while t + session < duration {
                    steps.append(ScenarioStep(at: t, action: .device(device: device, command: "open"),
                        line: behaviour.line))
                    for i in 0..<behaviour.editsPerSession {
                        editNumber += 1
                        let at = t + session * Double(i + 1) / Double(behaviour.editsPerSession + 1)
                        let draft = "draft-\(Int(generator.next() % UInt64(behaviour.drafts)) + 1)"
                        if written.contains(draft) && deletes.chance(behaviour.deleteShare) {
                            written.remove(draft)
                            steps.append(ScenarioStep(
                                at: at,
                                action: .edit(device: device, draft: draft, action: .delete, title: nil, body: nil),
                                line: behaviour.line))
                            continue
                        }
                        written.insert(draft)
                        steps.append(ScenarioStep(
                            at: at,
                            action: .edit(device: device, draft: draft, action: .update,
                                          title: "\(draft) by \(device)",
                                          body: "edit \(editNumber) from \(device) at \(Int(at))s"),
                            line: behaviour.line))
                    }
                    // A web user closes the tab at the end of a session (and with it the page's timer); an app goes to
                    // the background.
                    let end = platforms[device] == .web ? "close" : "background"
                    steps.append(ScenarioStep(at: t + session, action: .device(device: device, command: end),
                                              line: behaviour.line))
                    t += session + generator.exponential(mean: meanGap)
                }
            }
        }
        steps += nemesisSchedule().steps
        // Stable: steps at the same time keep their written order.
        return steps.enumerated().sorted { ($0.element.at, $0.offset) < ($1.element.at, $1.offset) }.map(\.element)
    }
}
