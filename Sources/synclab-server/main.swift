// synclab-server: parse the flags, start the shell, serve until stopped. See `synclab-server --help`.
import LabKit
import SyncServer

/// Builds and runs the server; its sockets and database close when this returns.
func serve() -> Int32 {
    Lifeline.install()
    Heap.keepFreedMemory()
    let options = ServerConfiguration.command.parseOrExit(Array(CommandLine.arguments.dropFirst()))
    let shell: ServerShell
    do {
        shell = try ServerShell(try ServerConfiguration(options: options))
    } catch {
        Output.stderr("synclab-server: \(error)\n")
        return 2
    }
    do {
        try shell.run()
        return 0
    } catch {
        Output.stderr("synclab-server: \(error)\n")
        return 1
    }
}

exitProcess(serve())
