@testable import PushBroker

/// The accounts every pure test uses.
enum Fixtures {
    static let directory: AccountDirectory = {
        do {
            return try AccountDirectory([
                .init(device: "pixel", account: "acme", platform: .android, token: "t-pixel"),
                .init(device: "tablet", account: "acme", platform: .android, token: "t-tablet"),
                .init(device: "iphone", account: "acme", platform: .ios, token: "t-iphone"),
                .init(device: "laptop", account: "acme", platform: .web, token: "t-laptop"),
                .init(device: "other", account: "zen", platform: .ios, token: "t-other"),
            ])
        } catch {
            fatalError("fixture accounts: \(error)")
        }
    }()
}
