import Testing

/// `EventConformance` on hand-written lines: each way a line can break the catalogue is caught and named. The checks
/// on real runs' `events.jsonl` are folded into runs the suite already makes (EndToEndTests' quickstart and crash,
/// SimulationTests' crash), so they cost no run of their own.
@Suite struct EventConformanceTests {
    static let head = #"{"wall":1000,"sim":0.5,"proc":"a","type":"#

    @Test func aLineAsTheCatalogueHasItPasses() {
        let line = Self.head + #""process.spawned","target":"a","pid":42}"#
        #expect(EventConformance.problems(in: line).isEmpty)
    }

    @Test func eachBreakOfTheCatalogueIsNamed() {
        let lines = [
            Self.head + #""no.such.type"}"#,
            Self.head + #""process.spawned","target":"a","pid":"42"}"#,
            Self.head + #""process.spawned","target":"a"}"#,
            Self.head + #""process.spawned","target":"a","pid":42,"extra":1}"#,
            #"{"sim":0.5,"proc":"a","type":"phase","name":"heal"}"#,
            "not json",
        ]
        let problems = EventConformance.problems(in: lines.joined(separator: "\n"))
        #expect(problems == [
            "line 1: unknown type no.such.type",
            "line 2: process.spawned.pid is not of kind integer",
            "line 3: process.spawned lacks pid",
            "line 4: process.spawned has extra, which the catalogue does not list",
            "line 5: wall is missing or not of kind integer",
            "line 6: not a JSON object",
        ], "\(problems)")
    }
}
