/// How the lab starts an outside program and how long it waits for it.
public struct ProgramConfiguration: Sendable {
    /// The program and its own arguments, then the device's flags (docs/DEVICE-CONTRACT.md, "Start-up").
    public var argv: [String]
    /// How long the program may take to say `ready` and to answer any request (real ms).
    public var answerWithinMs: Int
    /// Where the program's pid is kept, so a lab side restarted after kill -9 can end an orphan of its last life.
    public var pidFile: String

    public init(argv: [String], answerWithinMs: Int, pidFile: String) {
        self.argv = argv
        self.answerWithinMs = answerWithinMs
        self.pidFile = pidFile
    }
}
