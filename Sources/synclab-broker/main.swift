import LabKit

let spec = CommandSpec(name: "synclab-broker", summary: "not built yet", usage: "synclab-broker [--help]", flags: [])
_ = spec.parseOrExit(Array(CommandLine.arguments.dropFirst()))
Output.stderr("synclab-broker: not built yet; see its issue\n")
exitProcess(2)
