/// How a chaos delay is drawn, in simulated seconds (the clock every other rule of the broker uses).
public enum DelayKind: String, Sendable, CaseIterable {
    /// No delay.
    case none
    /// Exactly `delaySec`.
    case constant
    /// Uniform in [0, 2·`delaySec`): mean `delaySec`.
    case uniform
    /// Exponential with mean `delaySec`.
    case exponential
}
