import LabKit
import SyncProtocol

/// What a `ProgramInstance` asks its shell to do, in order.
public enum ProgramDirective: Sendable, Equatable {
    /// One JSON line to the program's standard input.
    case toProgram(JSONValue)
    case toBroker(Message)
    case answer(to: [UInt8], ControlAck)
    case log(EventLine)
    /// The program broke the contract: `program.failed {reason}`, stop it, exit 3.
    case fail(String)
    /// SIGKILL of the program, as the OS kills an app (an overrun pass, a force quit): `program.killed`, then it
    /// is started again and its `ready` goes to `ProgramInstance.restarted`.
    case killProgram(reason: String, pass: Int?)
    /// A clean stop: tell the program, wait for it to exit, exit 0.
    case stop
}
