import Launcher
import LabKit

exitProcess(LauncherCommand.main(Array(CommandLine.arguments.dropFirst())))
