import Foundation
import SyncProtocol
import Testing

@testable import Launcher

/// The timeline's model from hand-made events: lanes, bands, marks and links, nothing drawn.
struct TimelineModelTests {
    static let devices = [
        TimelineModel.DeviceInfo(id: "a", account: "acme", platform: "android", start: "foreground", host: "a"),
        TimelineModel.DeviceInfo(id: "b", account: "acme", platform: "ios", start: "background", host: "b"),
    ]

    /// Events from `(sim, proc, type, fields)`, fields as JSON object members without braces.
    static func events(_ rows: [(Double, String, String, String)]) -> [Event] {
        rows.enumerated().map { index, row in
            let text =
                "{\"wall\":\(1_000_000 + index * 1000),\"sim\":\(row.0),\"proc\":\"\(row.1)\",\"type\":\"\(row.2)\""
                + (row.3.isEmpty ? "" : ",\(row.3)") + "}"
            let value = try! JSONValue.parse(text)
            return Event(wall: Int64(1_000_000 + index * 1000), sim: row.0, proc: row.1, type: row.2, fields: value)
        }
    }

    /// An edit on a, applied as seq 1, hinted to b (delivered), pulled by b's push pass; one later hint dropped.
    static let edit: [(Double, String, String, String)] = [
        (0, "broker", "process.started", #""role":"broker""#),
        (10, "a", "op.saved", #""key":"k1","draft":"d1","action":"create""#),
        (11, "a", "op.sent", #""key":"k1","attempt":1,"pass":1"#),
        (12, "server", "op.applied", #""device":"a","account":"acme","key":"k1","seq":1"#),
        (12.5, "a", "op.result", #""key":"k1","outcome":"acknowledged","seq":1"#),
        (13, "broker", "hint.accepted", #""hint":"h-1","device":"b","account":"acme","head":1,"seqs":[1]"#),
        (14, "broker", "hint.delivered", #""hint":"h-1","device":"b","head":1"#),
        (15, "b", "hint.received", #""hint":"h-1","head":1"#),
        (16, "b", "pass.start", #""pass":1,"trigger":"push""#),
        (17, "b", "change.applied", #""seq":1,"key":"k1","origin":"a","draft":"d1","pass":1,"trigger":"push""#),
        (17, "b", "cursor.moved", #""from":0,"to":1,"pass":1"#),
        (18, "b", "pass.end", #""pass":1,"trigger":"push","cutOff":false"#),
        (20, "a", "op.saved", #""key":"k2","draft":"d1","action":"update""#),
        (21, "server", "op.applied", #""device":"a","account":"acme","key":"k2","seq":2"#),
        (22, "broker", "hint.accepted", #""hint":"h-2","device":"b","account":"acme","head":2,"seqs":[2]"#),
        (23, "broker", "hint.dropped", #""hint":"h-2","device":"b","reason":"loss""#),
        (30, "launcher", "phase", #""name":"heal""#),
        (35, "launcher", "phase", #""name":"quiesce""#),
        (40, "launcher", "phase", #""name":"check""#),
    ]

    @Test func oneLanePerProcessServerBrokerAndEachDevice() {
        let model = TimelineModel(events: Self.events(Self.edit), devices: Self.devices)
        #expect(model.lanes.map(\.id) == ["server", "broker", "a", "b"])
        #expect(model.rules.isEmpty)
        #expect(model.end == 40)
    }

    @Test func anEditsLineageIsLinkedFromSaveToTheOtherDevice() {
        let model = TimelineModel(events: Self.events(Self.edit), devices: Self.devices)
        let kinds = model.links.filter { $0.keys.contains("k1") }.map(\.kind)
        #expect(kinds == [.send, .notice, .hint, .pull])
        let send = model.links.first { $0.kind == .send }!
        #expect(send.fromLane == "a" && send.toLane == "server" && send.fromSim == 11 && send.toSim == 12)
        let pull = model.links.first { $0.kind == .pull && $0.keys.contains("k1") }!
        #expect(pull.fromLane == "server" && pull.toLane == "b" && pull.toSim == 17)
        #expect(model.marks.contains { $0.kind == .saved && $0.lane == "a" && $0.keys.contains("k1") })
        #expect(model.marks.contains { $0.kind == .changeApplied && $0.lane == "b" && $0.keys.contains("k1") })
        // Applied on its own device is not an arrival.
        #expect(!model.marks.contains { $0.kind == .changeApplied && $0.lane == "a" })
    }

    @Test func aHintThatDiedIsMarkedWhereItDiedWithItsReason() {
        let model = TimelineModel(events: Self.events(Self.edit), devices: Self.devices)
        let died = model.marks.filter { $0.kind == .hintDied }
        #expect(died.count == 1)
        #expect(died.first?.lane == "broker" && died.first?.sim == 23 && died.first?.reason == "loss")
        #expect(died.first?.keys.contains("k2") == true && died.first?.keys.contains("h-2") == true)
        // The delivered hint did not die.
        #expect(!died.contains { $0.keys.contains("h-1") })
    }

    @Test func aLostHintIsLinkedToTheLaterApplyThatRepairedIt() {
        // Before the repair, k2's hint to b died and nothing brought k2 to b: no repair link.
        let before = TimelineModel(events: Self.events(Self.edit), devices: Self.devices)
        #expect(!before.links.contains { $0.kind == .repair })
        var rows = Self.edit
        rows.insert((26, "b", "pass.start", #""pass":2,"trigger":"foreground""#), at: rows.count - 3)
        rows.insert(
            (27, "b", "change.applied",
                #""seq":2,"key":"k2","origin":"a","draft":"d1","pass":2,"trigger":"foreground""#),
            at: rows.count - 3)
        let model = TimelineModel(events: Self.events(rows), devices: Self.devices)
        let repairs = model.links.filter { $0.kind == .repair }
        #expect(repairs.count == 1)
        #expect(repairs.first?.fromLane == "broker" && repairs.first?.fromSim == 23)
        #expect(repairs.first?.toLane == "b" && repairs.first?.toSim == 27)
        #expect(repairs.first?.label.contains("by a foreground pass") == true)
    }

    @Test func anUnknownOutcomeAndAnOpThatNeedsAttentionAreMarkedOnTheirDevice() {
        #expect(!TimelineModel(events: Self.events(Self.edit), devices: Self.devices).marks.contains {
            $0.kind == .unknownOutcome || $0.kind == .needsAttention
        })
        var rows = Self.edit
        rows.insert((11.5, "a", "op.result", #""key":"k1","outcome":"unknown","reason":"no reply in 300 ms""#), at: 3)
        rows.append((41, "a", "op.result", #""key":"k2","outcome":"needsAttention","reason":"rejected: too long""#))
        let model = TimelineModel(events: Self.events(rows), devices: Self.devices)
        let unknown = model.marks.filter { $0.kind == .unknownOutcome }
        #expect(unknown.count == 1 && unknown.first?.lane == "a"
            && unknown.first?.label.contains("no reply in 300 ms") == true)
        let attention = model.marks.filter { $0.kind == .needsAttention }
        #expect(attention.count == 1 && attention.first?.reason == "rejected: too long")
    }

    @Test func hintsHeldByAKilledBrokerAreMarkedLostWhereItWasKilled() {
        var rows = Self.edit
        // h-2 is accepted but neither delivered nor dropped when the broker is killed.
        rows.removeAll { $0.2 == "hint.dropped" }
        rows.insert((24, "launcher", "process.killed", #""target":"broker""#), at: rows.count - 3)
        rows.insert((26, "broker", "process.started", #""role":"broker""#), at: rows.count - 3)
        let model = TimelineModel(events: Self.events(rows), devices: Self.devices)
        let lost = model.marks.filter { $0.kind == .hintDied }
        #expect(lost.count == 1)
        #expect(lost.first?.sim == 24 && lost.first?.reason == "lost with the broker")
        #expect(lost.first?.keys.contains("k2") == true)
        // Delivered before the kill: h-1 did not die.
        #expect(!lost.contains { $0.keys.contains("h-1") })
    }

    @Test func appStateBandsStartFromTheDeclaredStateAndFollowAppEvents() {
        var rows = Self.edit
        rows.insert((5, "b", "app.foreground", #""from":"background""#), at: 1)
        rows.insert((25, "b", "app.forceQuit", #""from":"foreground""#), at: rows.count - 3)
        let model = TimelineModel(events: Self.events(rows), devices: Self.devices)
        let b = model.bands(on: "b").filter { [.foreground, .background, .forceQuit].contains($0.kind) }
        #expect(b.map(\.kind) == [.background, .foreground, .forceQuit])
        #expect(b.map(\.start) == [0, 5, 25])
        #expect(b.last?.end == 40)
        // a never changed state: foreground from the start to the end.
        let a = model.bands(on: "a").filter { $0.kind == .foreground }
        #expect(a.count == 1 && a.first?.start == 0 && a.first?.end == 40)
    }

    @Test func killRestartPauseOfflineAndFaultsAreBands() {
        var rows = Self.edit
        rows += [
            (24, "launcher", "process.killed", #""target":"server""#),
            (26, "launcher", "process.restarted", #""target":"server""#),
            (24, "launcher", "process.paused", #""target":"b""#),
            (27, "launcher", "process.resumed", #""target":"b""#),
            (2, "a", "net.offline", ""), (8, "a", "net.online", ""),
            (3, "broker", "fault.set", #""scope":"global","loss":0.5,"duplicate":0,"delayKind":"none""#),
            (9, "broker", "fault.set", #""scope":"all","off":true"#),
            (4, "server", "fault.set", #""dropReply":0.2,"transient":0,"reject":0,"replyDelayMs":0"#),
            (0, "server", "process.started", #""role":"server""#),
            (26.5, "server", "process.started", #""role":"server""#),
        ]
        rows.sort { $0.0 < $1.0 }
        let model = TimelineModel(events: Self.events(rows), devices: Self.devices)
        let down = model.bands(on: "server").filter { $0.kind == .down }
        #expect(down.count == 1 && down.first?.start == 24 && down.first?.end == 26)
        #expect(model.bands(on: "b").contains { $0.kind == .paused && $0.start == 24 && $0.end == 27 })
        #expect(model.bands(on: "a").contains { $0.kind == .offline && $0.start == 2 && $0.end == 8 })
        let chaos = model.bands(on: "broker").filter { $0.kind == .fault }
        #expect(chaos.count == 1 && chaos.first?.start == 3 && chaos.first?.end == 9)
        #expect(chaos.first?.label.contains("loss 0.5") == true)
        #expect(!model.bands.contains { $0.kind == .charging })
        // The server's faults stay on until its kill (a restarted server starts without them).
        let faults = model.bands(on: "server").filter { $0.kind == .fault }
        #expect(faults.count == 1 && faults.first?.start == 4 && faults.first?.end == 26.5)
        // Without those events, none of those bands.
        let plain = TimelineModel(events: Self.events(Self.edit), devices: Self.devices)
        #expect(!plain.bands.contains { [.down, .paused, .offline, .fault].contains($0.kind) })
    }

    @Test func chargingIsABandFromTheDeclaredStateOrAPlug() {
        var devices = Self.devices
        devices[1].charging = true
        var rows = Self.edit
        rows.insert((4, "a", "power.plugged", ""), at: 1)
        rows.insert((6, "a", "power.unplugged", ""), at: 2)
        rows.insert((8, "b", "power.unplugged", ""), at: 3)
        let model = TimelineModel(events: Self.events(rows), devices: devices)
        #expect(model.bands(on: "a").filter { $0.kind == .charging }.map { [$0.start, $0.end] } == [[4, 6]])
        #expect(model.bands(on: "b").filter { $0.kind == .charging }.map { [$0.start, $0.end] } == [[0, 8]])
    }

    @Test func healAndQuiescePhasesSpanEveryLane() {
        let model = TimelineModel(events: Self.events(Self.edit), devices: Self.devices)
        let phases = model.bands.filter { $0.lane == nil }
        #expect(phases.map(\.kind) == [.heal, .quiesce])
        #expect(phases.map(\.start) == [30, 35] && phases.map(\.end) == [35, 40])
    }

    @Test func theCursorStepsAgainstItsAccountsHead() {
        let model = TimelineModel(events: Self.events(Self.edit), devices: Self.devices)
        let b = model.cursors.first { $0.lane == "b" }!
        #expect(b.cursor.map(\.value) == [1])
        #expect(b.head.map(\.value) == [1, 2])
        #expect(b.head.map(\.sim) == [12, 21])
        #expect(model.passes.contains { $0.lane == "b" && $0.trigger == "push" && $0.start == 16 && $0.end == 18 })
    }

    @Test func aReceivedButIgnoredHintAndADuplicateAreMarked() {
        var rows = Self.edit
        rows.insert((14.5, "broker", "hint.duplicated", #""hint":"h-1","device":"b""#), at: 7)
        rows.insert((15.5, "b", "hint.ignored", #""hint":"h-1","reason":"the tab is closed""#), at: 9)
        let model = TimelineModel(events: Self.events(rows), devices: Self.devices)
        #expect(model.marks.contains { $0.kind == .hintDuplicated && $0.lane == "broker" && $0.keys.contains("k1") })
        let ignored = model.marks.filter { $0.kind == .hintIgnored }
        #expect(
            ignored.count == 1 && ignored.first?.reason == "the tab is closed"
                && ignored.first?.keys.contains("k1") == true)
    }

    @Test func manyDevicesKeepTheBusiestAndSumTheRestPerPlatformSayingSo() {
        var devices: [TimelineModel.DeviceInfo] = []
        var rows: [(Double, String, String, String)] = []
        for i in 0..<20 {
            let id = "d\(i)"
            devices.append(
                .init(
                    id: id, account: "acme", platform: i % 2 == 0 ? "android" : "web", start: "foreground",
                    host: id))
            // d0 is the busiest, d19 the quietest.
            for p in 0..<(21 - i) { rows.append((Double(p), id, "pass.start", #""pass":1,"trigger":"periodic""#)) }
        }
        rows.sort { $0.0 < $1.0 }
        let model = TimelineModel(events: Self.events(rows), devices: devices, focus: ["d19"], maxDevices: 4)
        let deviceLanes = model.lanes.filter { if case .device = $0.kind { return true } else { return false } }
        #expect(deviceLanes.map(\.id) == ["d0", "d1", "d2", "d3", "d19"])
        let aggregates = model.lanes.filter { if case .aggregate = $0.kind { return true } else { return false } }
        #expect(aggregates.map(\.id) == ["all-android", "all-web"])
        #expect(aggregates.map(\.members.count) == [8, 7])
        #expect(model.rules.first?.contains("busiest") == true)
        let summed = model.aggregates.first { $0.lane == "all-android" }!.passes.reduce(0, +)
        #expect(summed == (4..<19).filter { $0 % 2 == 0 }.map { 21 - $0 }.reduce(0, +))
    }

    @Test func manyEditsAreSampledAndTheRuleIsStated() {
        var rows: [(Double, String, String, String)] = []
        for i in 0..<50 { rows.append((Double(i), "a", "op.saved", "\"key\":\"k\(i)\",\"draft\":\"d\"")) }
        let model = TimelineModel(events: Self.events(rows), devices: Self.devices, focus: ["k7"], maxEdits: 10)
        let saved = model.marks.filter { $0.kind == .saved }.flatMap(\.keys).filter { $0.hasPrefix("k") }
        #expect(saved == ["k0", "k5", "k7", "k10", "k15", "k20", "k25", "k30", "k35", "k40", "k45"])
        #expect(model.rules.contains { $0.contains("every 5th") })
        #expect(model.focused(["k7"]) && !model.focused(["k8"]))
        // A device in the focus: its lane, not every mark naming it.
        let byDevice = TimelineModel(events: Self.events(rows), devices: Self.devices, focus: ["a"])
        #expect(!byDevice.focused(["k1", "d", "a"]))
    }

    @Test func aRunWithoutEventsStillDrawsItsLanesAndEmptyPlots() {
        let model = TimelineModel(events: [], devices: Self.devices)
        #expect(model.lanes.count == 4 && model.marks.isEmpty && model.links.isEmpty)
        #expect(model.bands.isEmpty, "a run of no time has no spans")
        let svg = Timeline(model: model).svg
        #expect(svg.hasPrefix("<svg id=\"timeline\"") && svg.hasSuffix("</svg>\n"))
        let plots = Plots(data: PlotData(events: [], devices: ["a", "b"], lineages: [], budgetSec: 3600,
                                         scenarioEnd: 0)).html
        #expect(plots.components(separatedBy: "plot-empty").count - 1 == 5)
    }

    @Test func theSvgHasALanePerProcessAndABandPerFault() {
        var rows = Self.edit
        rows += [
            (24, "launcher", "process.killed", #""target":"server""#),
            (26, "launcher", "process.restarted", #""target":"server""#),
        ]
        rows.sort { $0.0 < $1.0 }
        let svg = Timeline(model: TimelineModel(events: Self.events(rows), devices: Self.devices)).svg
        #expect(svg.components(separatedBy: "class=\"lane\"").count - 1 == 4)
        #expect(svg.components(separatedBy: "band band-down").count - 1 == 1)
        #expect(svg.contains("data-lane=\"server\" data-t=\"24\" data-t2=\"26\""))
        #expect(!svg.contains("<script"))
    }
}
