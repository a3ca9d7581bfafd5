// synclab-broker: parse the flags, load the accounts file, serve until told to stop. See `synclab-broker --help`.
import LabKit
import PushBroker

Lifeline.install()
let options = BrokerCommand.spec.parseOrExit(Array(CommandLine.arguments.dropFirst()))
let configuration: BrokerConfiguration
let directory: AccountDirectory
do {
    configuration = try BrokerCommand.configuration(from: options)
    directory = try AccountDirectory.load(path: configuration.accountsPath)
} catch {
    Output.stderr("synclab-broker: \(error)\n")
    exitProcess(2)
}
do {
    try BrokerShell(configuration: configuration, directory: directory).run()
} catch {
    Output.stderr("synclab-broker: \(error)\n")
    exitProcess(1)
}
exitProcess(0)
