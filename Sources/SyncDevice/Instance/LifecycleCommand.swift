/// What a user or the OS does to the device (control commands).
public enum LifecycleCommand: Sendable, Equatable {
    /// Launch the app or bring it to the foreground (web: load or show the tab). Clears a force quit.
    case open
    /// Send the app to the background (web: hide the tab).
    case background
    /// iOS force quit from the app switcher, Android force stop (web: the browser is killed).
    case forceQuit
    /// The app is not running (web: the tab is closed).
    case close
    case offline, online
    case plug, unplug
    case engagement(opensPerDay: Double)
    /// iOS Background App Refresh switch.
    case refresh(on: Bool)
}
