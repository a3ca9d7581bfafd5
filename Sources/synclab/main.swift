import Bench
import LabKit
import Launcher

// `bench` lives in a target of its own (it links the NATS and Redis clients of its peers); everything else is the
// launcher's.
let arguments = Array(CommandLine.arguments.dropFirst())
exitProcess(arguments.first == "bench"
    ? BenchCommand.main(Array(arguments.dropFirst())) : LauncherCommand.main(arguments))
