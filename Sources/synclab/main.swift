import LabKit

let spec = CommandSpec(name: "synclab", summary: "not built yet", usage: "synclab [--help]", flags: [])
_ = spec.parseOrExit(Array(CommandLine.arguments.dropFirst()))
Output.stderr("synclab: not built yet; see its issue\n")
exitProcess(2)
