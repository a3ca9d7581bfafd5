/// One counter-example: what is wrong, about which device (or account), in a sentence a student can follow.
public struct Violation: Sendable, Equatable {
    /// The device the counter-example is about; nil when it is about an account or the server as a whole.
    public let device: String?
    /// The account it is about (the device's, when there is a device).
    public let account: String?
    public let text: String

    public init(device: String?, account: String?, _ text: String) {
        self.device = device
        self.account = account
        self.text = text
    }
}

/// The verdict on one invariant: held or not, a one-line detail, and every counter-example found.
public struct InvariantResult: Sendable, Equatable {
    public let name: String
    public let held: Bool
    public let detail: String
    /// What the counter-example is about (op keys, hint ids, devices, drafts), highlighted on the report's timeline;
    /// empty when the check names nothing more than its detail says.
    public var focus: [String] = []

    public var violations: [Violation] = []

    init(name: String, held: Bool, detail: String, violations: [Violation] = []) {
        self.name = name
        self.held = held
        self.detail = detail
        self.violations = violations
    }

    /// Held when there is no counter-example; the detail then says what was checked, else names the first one and
    /// how many there are.
    init(_ name: String, _ violations: [Violation], held detail: @autoclosure () -> String) {
        self.name = name
        self.violations = violations
        self.held = violations.isEmpty
        if let first = violations.first {
            self.detail = violations.count == 1 ? first.text : "\(first.text) (and \(violations.count - 1) more)"
        } else {
            self.detail = detail()
        }
    }
}
