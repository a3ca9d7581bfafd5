import Foundation
import LabKit
import LabTestSupport
import SyncProtocol
import Testing
@testable import SyncDevice

/// A pass's typed events (`PassEvent`) are written two ways: straight into the line by a real process, as a field
/// list by the simulation and the tests. Both must give the same bytes, and the fields the catalogue names.
@Suite("PassEvent")
struct PassEventTests {
    let folder = TempFolder()

    static let change = Change(seq: 22, draft: "draft \"1\"\n", action: .update, version: 3, title: "t", body: "b",
                               origin: "d0", key: "d0-e1p666qrb-22", conflict: false)
    static let samples: [PassEvent] = [
        .hintReceived(hint: "h-190", head: 22, keys: ["account", "head", "hint"]),
        .hintReceived(hint: "h-\u{1}é", head: -1, keys: []),
        .trigger(.push, coalesced: false),
        .trigger(.manual, coalesced: true),
        .passStart(pass: 23, trigger: .push, limitSec: nil),
        .passStart(pass: 24, trigger: .opportunistic, limitSec: 30),
        .passStart(pass: 25, trigger: .periodic, limitSec: 0.0003260000000011587),
        .changeApplied(change, pass: 23, trigger: .push),
        .cursorMoved(from: 21, to: 22, pass: 23),
        .passEnd(PassEvent.PassEnd(pass: 23, trigger: .push, sent: 0, pulled: 1, cursor: 22, cutOff: false,
                                   outcome: .completed, head: 22, durationSec: 0.0004069999999956053,
                                   executionSec: 0.0004069999999956053, nextRunSim: 899.022169893918)),
        .passEnd(PassEvent.PassEnd(pass: 1, trigger: .manual, sent: 3, pulled: 0, cursor: 0, cutOff: true,
                                   outcome: .error, head: 7, durationSec: 2, executionSec: 1e-9, nextRunSim: nil)),
    ]

    @Test("the typed write and the field list give the same line, byte for byte")
    func bothSpellingsAgree() throws {
        let path = folder.file("events.jsonl")
        let log = try EventLog(path: path, process: "d1", clock: SimClock(epochMicros: 0, scale: 1))
        for event in Self.samples {
            log.emit(event.quoted) { event.write(to: &$0) }
            let line = event.line
            log.emit(line.type, line.fields)
        }
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map {
            // What follows the stamp: proc, type and the fields.
            String($0[$0.range(of: ",\"proc\":")!.lowerBound...])
        }
        #expect(lines.count == 2 * Self.samples.count)
        for index in stride(from: 0, to: lines.count, by: 2) {
            #expect(lines[index] == lines[index + 1])
        }
    }

    @Test("the simulation's byte writer gives what a field list written by JSONValue gives")
    func byteWriterAgrees() {
        for event in Self.samples {
            var sink = EventBytes([])
            event.write(to: &sink)
            var expected: [UInt8] = []
            for (key, value) in event.line.fields {
                expected.append(UInt8(ascii: ","))
                JSONValue.string(key).write(to: &expected)
                expected.append(UInt8(ascii: ":"))
                value.write(to: &expected)
            }
            #expect(String(decoding: sink.bytes, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
        }
    }

    @Test("each typed event's fields are the catalogue's, of the kinds it names")
    func fieldsAreTheCatalogues() {
        for event in Self.samples {
            let line = event.line
            let type = event.type
            #expect(line.type == type.name)
            for field in type.fields {
                let value = line[field.name]
                #expect(field.optional && value == nil || field.kind.matches(value), "\(line): \(field.name)")
            }
            if !type.open {
                let known = Set(type.fields.map(\.name))
                #expect(line.fields.allSatisfy { known.contains($0.0) }, "\(line)")
            }
        }
    }
}
