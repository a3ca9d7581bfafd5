import Foundation
import LabKit
import SyncProtocol
import Testing
@testable import SyncDevice

/// The Android WorkManager model (docs/DEVICE.md lists the rules).
@Suite struct AndroidSchedulerTests {
    static let hour = 3_600.0

    func settings(opensPerDay: Double = 3, charging: Bool = false, desiredMin: Double = 15) -> DeviceSettings {
        var settings = DeviceSettings()
        settings.startState = .background
        settings.opensPerDay = opensPerDay
        settings.charging = charging
        settings.desiredIntervalSec = desiredMin * 60
        return settings
    }

    @Test func periodicWorkHasAFifteenMinuteFloor() throws {
        let h = try DeviceHarness(platform: .android, settings: settings(charging: true, desiredMin: 5))
        h.start()
        h.advance(by: 24 * Self.hour)
        let starts = h.passes(.periodic).map(\.started)
        let gaps = zip(starts.dropFirst(), starts).map { $0 - $1 }
        #expect(starts.count > 80)  // charging: no doze, no bucket limit: about one run per 15-16 minutes
        #expect(gaps.allSatisfy { $0 >= 15 * 60 })
        let measured = Guarantee.medianGap(h.passes(.periodic).map(\.started))
        #expect(h.instance.guarantee == .periodic(minimum: 900, typical: measured))
        if case .periodic(_, let typical) = h.instance.guarantee {
            #expect(typical! > 15 * 60 && typical! < 17 * 60)  // seed 000: "Periodic(15m, ~16m)"
        }
    }

    @Test func dozeDefersWorkToMaintenanceWindows() throws {
        let h = try DeviceHarness(platform: .android, settings: settings())
        h.start()
        h.advance(by: 24 * Self.hour)
        let doze = try #require(h.events("doze.enter").first)
        #expect(doze["nextMaintenanceSim"]?.doubleValue == 2 * Self.hour)
        let windows = h.events("doze.maintenance").compactMap { $0["untilSim"]?.doubleValue }.map { $0 - 600 }
        #expect(windows.count >= 3)
        // Before doze (the first idle hour) work runs every ~16 min; after, only inside maintenance windows.
        let afterDoze = h.passes(.periodic).map(\.started).filter { $0 > Self.hour }
        #expect(!afterDoze.isEmpty)
        for start in afterDoze {
            #expect(windows.contains { start >= $0 && start <= $0 + 600 }, "periodic pass at \(start) outside a window")
        }
        #expect(afterDoze.count <= windows.count)
        let dozeStates = h.instance.scheduler.dozing
        #expect(dozeStates)
    }

    @Test func chargingEndsDozeAndRelaxesTheLimits() throws {
        let h = try DeviceHarness(platform: .android, settings: settings())
        h.start()
        h.advance(by: 6 * Self.hour)
        #expect(h.instance.scheduler.dozing)
        let dozing = h.passes(.periodic).count
        h.lifecycle(.plug)
        #expect(!h.instance.scheduler.dozing)
        h.advance(by: 6 * Self.hour)
        #expect(h.passes(.periodic).count - dozing >= 20)
        #expect(h.events("doze.exit").first?["reason"] == "charging")
    }

    @Test func forceStopRunsNothingUntilTheAppIsOpened() throws {
        let h = try DeviceHarness(platform: .android, settings: settings(charging: true))
        h.start()
        h.advance(by: Self.hour)
        h.lifecycle(.forceQuit)
        let stopped = h.passes.count
        h.advance(by: 48 * Self.hour)
        h.hint("h1", head: 0)
        h.lifecycle(.online)
        #expect(h.passes.count == stopped)
        #expect(h.events("hint.ignored").count == 1)
        h.lifecycle(.open)
        #expect(h.passes.last?.trigger == .foreground)
        h.lifecycle(.background)
        h.advance(by: Self.hour)
        #expect(h.passes.last?.trigger == .periodic)
    }

    @Test func aHighPriorityPushWakesADozingDevice() throws {
        let h = try DeviceHarness(platform: .android, settings: settings())
        h.start()
        h.advance(by: 3 * Self.hour + 1)
        #expect(h.instance.scheduler.dozing)
        _ = h.server.remoteEdit(draft: "d1", title: "urgent")
        h.hint("h1", head: 1)
        #expect(h.passes.last?.trigger == .push)
        #expect(h.instance.cursor == 1)
    }

    @Test func theStandbyBucketQuotaRationsBackgroundJobTime() {
        var rules = AndroidScheduler.Rules()
        rules.minimumCharge = 300  // each job costs 5 minutes of quota: rare allows two per day
        rules.rareSessionEvery = nil  // the time quota alone (the rare bucket's daily session is tested below)
        var rng = SeededGenerator(seed: 3)
        func runs(opensPerDay: Double) -> Int {
            var model = AndroidScheduler(environment: DeviceEnvironment(app: .background, opensPerDay: opensPerDay),
                                         desiredInterval: 900, rules: rules)
            var now = 0.0
            _ = model.register(now: now, rng: &rng)
            // Keep the device out of doze (it is moved now and then) to isolate the bucket.
            var count = 0
            while now < 86_400 {
                now = min(model.nextWake ?? now + 60, now + 60)
                let output = model.tick(now: now, rng: &rng)
                for grant in output.grants where grant == .periodic {
                    count += 1
                    _ = model.passEnded(trigger: .periodic, started: now, ended: now + 1, execution: 1, cutOff: false,
                                        rng: &rng)
                }
                if now.truncatingRemainder(dividingBy: 1_800) < 60 {
                    _ = model.update(DeviceEnvironment(app: .foreground, opensPerDay: opensPerDay), now: now, rng: &rng)
                    _ = model.update(DeviceEnvironment(app: .background, opensPerDay: opensPerDay), now: now, rng: &rng)
                }
            }
            return count
        }
        let rare = runs(opensPerDay: 0.05)
        let frequent = runs(opensPerDay: 0.5)
        let workingSet = runs(opensPerDay: 5)
        #expect(rare == 2)
        #expect(frequent == 4)
        #expect(workingSet == 12)
        #expect(AndroidScheduler.StandbyBucket.from(opensPerDay: 0.05, foreground: true) == .active)
    }

    /// The lab's reading of Android's buckets ("frequent: used regularly, but not every day"): seed 000's users
    /// open the app "a few times a week", 0.43 times a day, which is frequent (docs/SEEDS.md, "Android on battery").
    @Test(arguments: [
        (5.0, AndroidScheduler.StandbyBucket.workingSet), (1.0, .workingSet), (0.99, .frequent), (0.43, .frequent),
        (1.0 / 7, .frequent), (0.14, .rare), (0.05, .rare), (0, .rare),
    ])
    func theStandbyBucketFollowsOpensPerDay(_ opens: Double, _ bucket: AndroidScheduler.StandbyBucket) {
        #expect(AndroidScheduler.StandbyBucket.from(opensPerDay: opens, foreground: false) == bucket)
        #expect(AndroidScheduler.StandbyBucket.from(opensPerDay: opens, foreground: true) == .active)
    }

    /// The screen on with the app in the background (the user in other apps): the phone never dozes.
    @Test func aScreenThatStaysOnKeepsThePhoneOutOfDoze() throws {
        var awake = settings()
        awake.screenOn = true
        let on = try DeviceHarness(platform: .android, settings: awake)
        on.start()
        on.advance(by: 6 * Self.hour)
        #expect(on.events("doze.enter").isEmpty)
        #expect(!on.instance.scheduler.dozing)
        #expect(on.passes(.periodic).count >= 20)  // working set: every ~16 minutes, the quota far from used
        #expect(on.events("bucket.deferred").isEmpty)
        let off = try DeviceHarness(platform: .android, settings: settings())
        off.start()
        off.advance(by: 6 * Self.hour)
        #expect(off.events("doze.enter").count == 1)  // the same phone with its screen off dozes after an hour
    }

    /// A rare app, awake and on battery: one short session of jobs a day ("at a minimum, once a day"), the rest held
    /// with `bucket.deferred`; no doze plays a part. Charging lifts it.
    @Test func theRareBucketRunsJobsInOneShortSessionADay() throws {
        var rare = settings(opensPerDay: 0.1)
        rare.screenOn = true
        let h = try DeviceHarness(platform: .android, settings: rare)
        h.start()
        h.advance(by: 48 * Self.hour)
        #expect(h.events("doze.enter").isEmpty)
        let starts = h.passes(.periodic).map(\.started)
        let first = try #require(starts.first)
        #expect(starts.count == 2)  // jobs come 15-17 minutes apart: one fits each 10-minute session
        #expect(starts.allSatisfy { s in [first, first + 24 * Self.hour].contains { s >= $0 && s <= $0 + 600 } })
        let deferred = h.events("bucket.deferred")
        #expect(deferred.count == 2)
        #expect(deferred.first?["bucket"] == "rare")
        #expect(deferred.first?["untilSim"]?.doubleValue.map { abs($0 - (first + 24 * Self.hour)) < 1 } == true)
        // The same phone plugged in: no bucket limits.
        var plugged = rare
        plugged.charging = true
        let charging = try DeviceHarness(platform: .android, settings: plugged)
        charging.start()
        charging.advance(by: 12 * Self.hour)
        #expect(charging.passes(.periodic).count >= 40)
        #expect(charging.events("bucket.deferred").isEmpty)
    }

    @Test func backgroundConnectivityRunsAPassUnlessDozing() throws {
        let h = try DeviceHarness(platform: .android, settings: settings())
        h.start()
        h.lifecycle(.offline)
        h.lifecycle(.online)
        #expect(h.passes.last?.trigger == .connectivity)
        h.advance(by: 3 * Self.hour + 1)
        h.lifecycle(.offline)
        let count = h.passes.count
        h.lifecycle(.online)
        #expect(h.passes.count == count)
        #expect(h.events("trigger.refused").last?["reason"]?.stringValue?.contains("doze") == true)
    }
}
