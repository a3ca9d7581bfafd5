// synclab-device: one client device, or a pool of them. The logic lives in the SyncDevice module; this file parses
// and starts it.
import LabKit
import LabControl
import SyncDevice

/// Reads a configuration (a bad one exits 2, pointing at `command --help`), then runs it (exits 1 if
/// that fails, naming the device or pool), and exits 0 when it returns.
func runOrExit<Configuration>(_ command: String, configuration read: () throws -> Configuration,
                              named name: (Configuration) -> String,
                              _ run: (Configuration) throws -> Void) -> Never {
    let configuration: Configuration
    do {
        configuration = try read()
    } catch {
        Output.stderr("\(command): \(error) (see \(command) --help)\n")
        exitProcess(2)
    }
    do {
        try run(configuration)
        exitProcess(0)
    } catch {
        Output.stderr("\(command) \(name(configuration)): \(error)\n")
        exitProcess(1)
    }
}

Lifeline.install()
Heap.keepFreedMemory()
let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "status" {
    exitProcess(DeviceStatusCommand.run(Array(arguments.dropFirst())))
}
if arguments.first == "control" {
    exitProcess(ControlCommand.run(Array(arguments.dropFirst())))
}
if arguments.first == "pool" {
    let options = DevicePoolCommandLine.spec.parseOrExit(Array(arguments.dropFirst()))
    runOrExit("synclab-device pool", configuration: { try DevicePoolCommandLine.configuration(options) },
              named: \.name) { try DevicePool($0).run() }
}
if arguments.first == "program" {
    // An outside device (docs/DEVICE-CONTRACT.md): exit 3 when its program broke the contract.
    let options = ProgramCommandLine.spec.parseOrExit(Array(arguments.dropFirst()))
    do {
        let (device, program) = try ProgramCommandLine.configuration(options)
        exitProcess(try ProgramShell(device, program: program).run())
    } catch let error as LabError {
        Output.stderr("synclab-device program: \(error) (see synclab-device program --help)\n")
        exitProcess(2)
    } catch {
        Output.stderr("synclab-device program: \(error)\n")
        exitProcess(1)
    }
}
let options = DeviceCommandLine.spec.parseOrExit(arguments)
runOrExit("synclab-device", configuration: { try DeviceCommandLine.configuration(options) },
          named: \.identity.device) { try DeviceShell($0).run() }
