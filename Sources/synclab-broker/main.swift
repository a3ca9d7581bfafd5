// synclab-broker: parse the flags, load the accounts file, serve until told to stop. See `synclab-broker --help`.
import LabKit
import PushBroker

Lifeline.install()
Heap.keepFreedMemory()
let options = BrokerCommand.spec.parseOrExit(Array(CommandLine.arguments.dropFirst()))
// Exit 2 when it cannot start (a wrong flag or accounts file, an endpoint that will not bind, an events file that
// will not open), 1 when serving fails later: as the server does (docs/ARCHITECTURE.md).
let shell: BrokerShell
do {
    let configuration = try BrokerCommand.configuration(from: options)
    let directory = try AccountDirectory.load(path: configuration.accountsPath)
    shell = try BrokerShell(configuration: configuration, directory: directory)
} catch {
    Output.stderr("synclab-broker: \(error)\n")
    exitProcess(2)
}
do {
    try shell.run()
} catch {
    Output.stderr("synclab-broker: \(error)\n")
    exitProcess(1)
}
exitProcess(0)
