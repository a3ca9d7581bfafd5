/// The app's state when the device process starts.
public enum StartState: String, Sendable, CaseIterable {
    case foreground, background, closed
}
