import LabKit

let spec = CommandSpec(name: "synclab-server", summary: "not built yet", usage: "synclab-server [--help]", flags: [])
_ = spec.parseOrExit(Array(CommandLine.arguments.dropFirst()))
Output.stderr("synclab-server: not built yet; see its issue\n")
exitProcess(2)
