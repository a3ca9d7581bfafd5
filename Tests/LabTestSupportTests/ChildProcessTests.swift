import Foundation
import LabTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The one child-process harness every test target starts its real processes with.
@Suite struct ChildProcessTests {
    @Test func anExitCodeAndAKillingSignalAreToldApart() throws {
        let folder = TempFolder()
        let exited = try ChildProcess("/bin/sh", ["-c", "exit 3"], log: folder.file("exit.log"))
        #expect(exited.finish(within: 60) == .exited(3))
        #expect(exited.exitStatus == 3)
        let killed = try ChildProcess("/bin/sh", ["-c", "kill -TERM $$"], log: folder.file("kill.log"))
        #expect(killed.finish(within: 60) == .signaled(SIGTERM))
        #expect(killed.exitStatus == 128 + SIGTERM)
    }

    @Test func finishStopsAChildThatOutlivesItsLimit() throws {
        let folder = TempFolder()
        let sleeper = try ChildProcess("/bin/sleep", ["600"], log: folder.file("sleep.log"))
        #expect(sleeper.isRunning)
        #expect(sleeper.finish(within: 0.2) == .signaled(SIGKILL))
        // With another signal first: the child's own reaction to it is what ends it.
        let polite = try ChildProcess("/bin/sleep", ["600"], log: folder.file("polite.log"))
        #expect(polite.finish(within: 0.2, stop: SIGINT) == .signaled(SIGINT))
        #expect(!polite.isRunning)
    }

    @Test func outputGoesToItsFilesOrToOneLog() throws {
        let folder = TempFolder()
        let script = "echo out; echo err >&2"
        let split = try ChildProcess("/bin/sh", ["-c", script], stdout: folder.file("out"), stderr: folder.file("err"))
        #expect(split.finish(within: 60) == .exited(0))
        #expect(split.log == "out\n")
        #expect(split.errors == "err\n")
        let merged = try ChildProcess.run("/bin/sh", ["-c", script])
        #expect(merged.status == 0)
        #expect(merged.output == "out\nerr\n")
        let silent = try ChildProcess("/bin/sh", ["-c", script], stdout: nil, stderr: nil)
        #expect(silent.finish(within: 60) == .exited(0))
        #expect(silent.log.isEmpty && silent.errors.isEmpty)
    }

    /// A child must not inherit what the test happens to hold: an open descriptor (a pipe end would keep a reader
    /// from ever seeing EOF), a blocked signal, an ignored one (the launcher's Ctrl-C handling relies on SIGINT).
    @Test func aChildStartsWithNoneOfTheTestsDescriptorsAndDefaultSignals() throws {
        let held = open("/dev/null", O_RDONLY)  // not close-on-exec
        defer { close(held) }
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGUSR2)
        var previousMask = sigset_t()
        pthread_sigmask(SIG_BLOCK, &blocked, &previousMask)
        let previousPipe = signal(SIGPIPE, SIG_IGN)
        let folder = TempFolder()
        let listing: ChildProcess
        let status: ChildProcess
        do {
            defer {
                pthread_sigmask(SIG_SETMASK, &previousMask, nil)
                signal(SIGPIPE, previousPipe)
            }
            // The shell lists its own descriptors; grep reads its own signal masks (a shell would reset them).
            listing = try ChildProcess("/bin/sh", ["-c", "ls /proc/$$/fd"], log: folder.file("fds.log"))
            status = try ChildProcess("/bin/grep", ["-E", "^Sig(Blk|Ign)", "/proc/self/status"],
                                      log: folder.file("status.log"))
        }
        #expect(listing.finish(within: 60) == .exited(0))
        #expect(status.finish(within: 60) == .exited(0))
        let fds = listing.log.split(separator: "\n").map(String.init)
        #expect(held > 2 && !fds.contains(String(held)), "the child holds the test's descriptor \(held): \(fds)")
        // Signals 1–31 (glibc keeps 32 and 33 for itself, and posix_spawn cannot reset those).
        let lines = status.log.split(separator: "\n").map(String.init)
        func standardSignals(_ field: String) -> UInt64? {
            lines.first { $0.hasPrefix(field + ":") }.flatMap { UInt64($0.dropFirst(field.count + 1)
                .trimmingCharacters(in: .whitespaces), radix: 16) }.map { $0 & 0x7FFF_FFFF }
        }
        #expect(standardSignals("SigBlk") == 0, "blocked in the child: \(lines)")
        #expect(standardSignals("SigIgn") == 0, "ignored in the child: \(lines)")
    }
}

@Suite struct TempFolderAndBinariesTests {
    @Test func aTempFolderIsFreshShortAndGoesWhenReleased() throws {
        var folder: TempFolder? = TempFolder()
        let path = try #require(folder?.path)
        #expect(FileManager.default.fileExists(atPath: path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: path).isEmpty)
        #expect(folder?.ipc("x.sock") == "ipc://\(path)/x.sock")
        #expect(path.utf8.count < 40, "ipc endpoints must fit a unix socket's 107 bytes")
        let inner = try #require(try folder?.folder("a/b"))
        try "hi".write(toFile: inner + "/c.txt", atomically: true, encoding: .utf8)
        #expect(folder?.text("a/b/c.txt") == "hi")
        #expect(folder?.text("missing") == "")
        #expect(TempFolder().path != path)
        folder = nil
        if ProcessInfo.processInfo.environment["SYNCLAB_KEEP_TEST_FOLDERS"] == nil {
            #expect(!FileManager.default.fileExists(atPath: path))
        }
    }

    @Test func theBuiltExecutablesAreFoundAndAMissingOneIsNamed() throws {
        for name in ["synclab", "synclab-server", "synclab-broker", "synclab-device"] {
            #expect(FileManager.default.isExecutableFile(atPath: try Binaries.path(name)))
        }
        #expect(try Binaries.folder(holding: "synclab") + "/synclab-server" == Binaries.path("synclab-server"))
        let error = try #require(throws: TestFailure.self) { try Binaries.path("synclab-nothing") }
        #expect(error.description.contains("no synclab-nothing next to the tests"))
    }
}
