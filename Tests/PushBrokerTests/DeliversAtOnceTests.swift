@testable import PushBroker
import SyncProtocol
import Testing

/// `deliversAtOnce` lets the instance skip a profile's decision list: it must only say yes where `offer` answers
/// `[.deliver]` and leaves the profile as it was, for every profile, setting and condition.
@Suite struct DeliversAtOnceTests {
    @Test func saysYesOnlyWhereOfferDeliversAndChangesNothing() {
        var settingsList: [ProfileSettings] = []
        for throttle in [0, 3] {
            for priority in [FCMPriority.normal, .high] {
                for ttl in [0.0, 60] {
                    var settings = ProfileSettings()
                    settings.apnsThrottlePerHour = throttle
                    settings.fcmPriority = priority
                    settings.webpushTTLSec = ttl
                    settingsList.append(settings)
                }
            }
        }
        let pending = PendingHint(ref: HintRef(number: 1, head: 1), account: "a", acceptedAt: 0)
        var yes = 0
        for settings in settingsList {
            for kind in [ProfileKind.apns, .fcm, .webpush] {
                for online in [false, true] {
                    for app in [AppState.foreground, .background, .forceQuit, .closed] {
                        for doze in [false, true] {
                            for refreshOff in [false, true] {
                                let conditions = DeviceConditions(online: online, app: app, doze: doze,
                                                                  refreshOff: refreshOff)
                                let profile = DeliveryProfile(kind, settings: settings)
                                guard profile.deliversAtOnce(conditions) else { continue }
                                yes += 1
                                var offered = profile
                                #expect(offered.offer(pending, conditions, now: 10) == [.deliver(pending)])
                                #expect(offered == profile)
                            }
                        }
                    }
                }
            }
        }
        #expect(yes > 0)
    }
}
