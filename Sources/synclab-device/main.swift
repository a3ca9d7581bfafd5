import LabKit

let spec = CommandSpec(name: "synclab-device", summary: "not built yet", usage: "synclab-device [--help]", flags: [])
_ = spec.parseOrExit(Array(CommandLine.arguments.dropFirst()))
Output.stderr("synclab-device: not built yet; see its issue\n")
exitProcess(2)
