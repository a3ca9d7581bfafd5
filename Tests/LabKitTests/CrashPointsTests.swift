import LabKit
import SyncProtocol
import Testing

@Suite("CrashPoints")
struct CrashPointsTests {
    @Test("a point fires on its nth occurrence after arming, once; unarmed points never fire")
    func firesOnTheNthOccurrence() {
        var points = CrashPoints()
        #expect(points.reach(.serverAfterNotice) == nil)
        points.arm(.serverAfterNotice, nth: 3)
        #expect(points.reach(.serverAfterNotice) == nil)
        #expect(points.reach(.serverAfterReply) == nil)
        #expect(points.reach(.serverAfterNotice) == nil)
        #expect(points.reach(.serverAfterNotice) == 3)
        #expect(points.reach(.serverAfterNotice) == nil, "only the nth occurrence fires")
        points.arm(.serverAfterNotice)
        #expect(points.reach(.serverAfterNotice) == 1, "re-arming restarts the count")
    }

    @Test("an occurrence with nothing in flight is not counted: the point waits for one with work")
    func waitsForAnOccurrenceWithWork() {
        var points = CrashPoints()
        points.arm(.deviceAfterClaim, nth: 2)
        #expect(points.reach(.deviceAfterClaim, work: 0) == nil, "an empty claim")
        #expect(points.reach(.deviceAfterClaim, work: 3) == nil, "the first claim with ops")
        #expect(points.reach(.deviceAfterClaim, work: 0) == nil, "another empty claim is not the second")
        #expect(points.reach(.deviceAfterClaim, work: 1) == 2, "the second claim with ops fires")
    }

    @Test("--crash-at items: POINT, POINT@N, DEVICE:POINT@N, comma-separated")
    func parsesFlagValues() throws {
        let items = try CrashPoints.parse("device.after-claim, p1:device.after-page-commit@2", role: "device")
        #expect(items == [ArmedCrash(point: .deviceAfterClaim, nth: 1),
                          ArmedCrash(device: "p1", point: .deviceAfterPageCommit, nth: 2)])
        #expect(try CrashPoints.parse("server.after-reply@5", role: "server") == [
            ArmedCrash(point: .serverAfterReply, nth: 5),
        ])
    }

    @Test("a point of another role, an unknown point or a bad count is refused, listing the role's points")
    func refusesBadItems() {
        do {
            _ = try CrashPoints.parse("server.after-reply", role: "broker")
            Issue.record("accepted a server point for a broker")
        } catch {
            #expect("\(error)".contains("broker.after-accept-before-deliver, broker.after-deliver"), "\(error)")
        }
        #expect(throws: LabError.self) { _ = try CrashPoints.parse("device.after-nap", role: "device") }
        #expect(throws: LabError.self) { _ = try CrashPoints.parse("device.after-claim@0", role: "device") }
        #expect(throws: LabError.self) { _ = try CrashPoints.parse("device.after-claim@x", role: "device") }
    }

    @Test("the control command crashAt arms {point, nth} and disarms with {off: true}")
    func controlArguments() throws {
        var points = CrashPoints()
        #expect(try points.control(["point": "broker.after-deliver", "nth": 2], role: "broker")
            == "armed broker.after-deliver @2")
        #expect(points.reach(.brokerAfterDeliver) == nil)
        #expect(try points.control(["off": true], role: "broker") == "every crash point disarmed")
        #expect(points.reach(.brokerAfterDeliver) == nil)
        #expect(points.armed.isEmpty)
        let point: JSONValue = "broker.after-deliver"
        #expect(throws: LabError.self) { _ = try points.control(["point": point, "when": 1], role: "broker") }
        #expect(throws: LabError.self) { _ = try points.control(["point": point, "nth": 0], role: "broker") }
        #expect(throws: LabError.self) { _ = try points.control(["nth": 1], role: "broker") }
        #expect(throws: LabError.self) { _ = try points.control(["off": false], role: "broker") }
    }

    @Test("every role has points, each with a help line naming it")
    func everyRoleHasDocumentedPoints() {
        for role in ["server", "broker", "device"] {
            let points = CrashPoint.of(role: role)
            #expect(points.count >= 2)
            let help = CrashPoint.helpText(role: role)
            for point in points { #expect(help.contains(point.rawValue) && !point.summary.isEmpty) }
        }
        #expect(CrashPoint.allCases.count == CrashPoint.of(role: "server").count + CrashPoint.of(role: "broker").count
            + CrashPoint.of(role: "device").count)
    }
}
