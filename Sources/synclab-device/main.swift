// synclab-device: one client device, or a pool of them. The logic lives in the SyncDevice module; this file parses
// and starts it.
import LabKit
import LabControl
import SyncDevice

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
    let configuration: DevicePoolConfiguration
    do {
        configuration = try DevicePoolCommandLine.configuration(options)
    } catch {
        Output.stderr("synclab-device pool: \(error) (see synclab-device pool --help)\n")
        exitProcess(2)
    }
    do {
        let pool = try DevicePool(configuration)
        try pool.run()
        exitProcess(0)
    } catch {
        Output.stderr("synclab-device pool \(configuration.name): \(error)\n")
        exitProcess(1)
    }
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
let configuration: DeviceConfiguration
do {
    configuration = try DeviceCommandLine.configuration(options)
} catch {
    Output.stderr("synclab-device: \(error) (see synclab-device --help)\n")
    exitProcess(2)
}
do {
    let shell = try DeviceShell(configuration)
    try shell.run()
    exitProcess(0)
} catch {
    Output.stderr("synclab-device \(configuration.identity.device): \(error)\n")
    exitProcess(1)
}
