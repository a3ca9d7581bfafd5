import LabKit
import SyncProtocol

/// How one host's event times are put on the launcher's clock when the events are merged (docs/HOSTS.md, "Clock
/// offsets"): the offset measured at the start and at the end, interpolated in between (a clock that drifts moves
/// linearly), held before the first and after the last, and subtracted from each `wall`.
///
/// Applied only when some measurement shows a skew, |offset| > its uncertainty: an offset inside its own error bar
/// is no evidence of a skew (on the test bed, one machine's clock, it is `date`'s start-up, ~0.2 ms), and shifting
/// by it would only blur the order of events a fraction of a millisecond apart.
struct ClockCorrection: Sendable, Equatable {
    /// (launcher µs, offset µs) of each measurement, in time order.
    let points: [(at: Int64, offset: Double)]
    let applied: Bool

    static func == (a: ClockCorrection, b: ClockCorrection) -> Bool {
        a.applied == b.applied && a.points.map(\.at) == b.points.map(\.at)
            && a.points.map(\.offset) == b.points.map(\.offset)
    }

    init(_ offsets: [ClockOffset]) {
        points = offsets.sorted { $0.atMicros < $1.atMicros }.map { ($0.atMicros, $0.offsetMs * 1000) }
        applied = offsets.contains { abs($0.offsetMs) > $0.uncertaintyMs }
    }

    /// The host's offset (µs, host − launcher) around wall time `wall`; 0 when not applied.
    func offsetMicros(at wall: Int64) -> Double {
        guard applied, let first = points.first, let last = points.last else { return 0 }
        if wall <= first.at || points.count == 1 { return first.offset }
        if wall >= last.at { return last.offset }
        let span = Double(last.at - first.at)
        return first.offset + (last.offset - first.offset) * Double(wall - first.at) / span
    }

    /// `wall` (the host's µs) on the launcher's clock.
    func corrected(_ wall: Int64) -> Int64 { wall - Int64(offsetMicros(at: wall).rounded()) }

    /// hosts.json's `merge` of a host: whether its events were moved, and by how much at the start and the end.
    var json: JSONValue {
        .object([("applied", .bool(applied)),
                 ("shiftMs", .array(applied ? points.map { .double(($0.offset).rounded() / 1000) } : []))])
    }
}

extension RunFolder {
    /// One event line with its `wall` moved by `correction` and its `sim` recomputed from it on `clock`; the rest of
    /// the line as it was. A line not in the shape `{"wall":…,"sim":…,` comes back unchanged.
    static func corrected(_ line: Substring, wall: Int64, by correction: ClockCorrection, clock: SimClock)
        -> Substring
    {
        let moved = correction.corrected(wall)
        guard moved != wall, let simKey = line.range(of: ",\"sim\":"),
              let simEnd = line[simKey.upperBound...].firstIndex(of: ",")
        else { return line }
        let simMillis = (clock.sim(atWall: moved) * 1000).rounded()
        let sim = JSONValue.double(simMillis / 1000).description
        return Substring("{\"wall\":\(moved),\"sim\":\(sim)" + line[simEnd...])
    }
}
