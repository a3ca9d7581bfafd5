import Foundation
import LabTestSupport
import SyncProtocol
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Every file of a run is its owner's only from the moment it exists, and a run's secrets come from the system's
/// generator: real `synclab run` of topologies/quickstart.json5 (real processes, real run folder).
@Suite(.serialized) struct RunFilesTests {
    static var topology: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../topologies/quickstart.json5").standardized.path
    }

    /// `synclab run` of quickstart (or of `file`) into `out`; its exit status.
    static func run(into out: String, file: String = topology) throws -> Int32 {
        let bin = try Binaries.folder(holding: "synclab")
        return try ChildProcess.run(Binaries.path("synclab"), ["run", file, "--out", out, "--bin", bin, "--quiet"],
                                    limit: 120, stop: SIGINT).status
    }

    /// quickstart with `security: "none"`, written into `home`.
    static func plaintextQuickstart(in home: TempFolder) throws -> String {
        let text = try String(contentsOfFile: topology, encoding: .utf8)
        let path = home.file("quickstart-plain.json5")
        try text.replacingOccurrences(of: "  seed: 7,", with: "  seed: 7,\n  security: \"none\",")
            .write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Every path below `root` (root included) whose mode lets its group or others read, write or enter it.
    static func widerThanOwner(_ root: String) -> [String] {
        var found: [String] = []
        var paths = [root]
        if let enumerator = FileManager.default.enumerator(atPath: root) {
            while let name = enumerator.nextObject() as? String { paths.append(root + "/" + name) }
        }
        for path in paths {
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT != S_IFLNK else { continue }
            if info.st_mode & 0o077 != 0 { found.append("\(path) \(String(info.st_mode & 0o777, radix: 8))") }
        }
        return found
    }

    /// Every device token of a run's accounts file, by device.
    static func tokens(_ folder: String) throws -> [String: String] {
        let accounts = try JSONValue.parse(try String(contentsOfFile: folder + "/accounts.json", encoding: .utf8))
        let devices = (accounts["accounts"]?.arrayValue ?? []).flatMap { $0["devices"]?.arrayValue ?? [] }
        var out: [String: String] = [:]
        for device in devices {
            if let id = device["id"]?.stringValue, let token = device["token"]?.stringValue { out[id] = token }
        }
        return out
    }

    /// The second run is the same topology with `security: "none"`: its accounts file and token files must agree too
    /// (a NULL run once kept the seeded tokens in accounts.json and the fresh ones in the token files: every hello
    /// was refused).
    @Test func aRunLeavesNothingReadableByOthersAndTwoRunsShareNoToken() throws {
        let home = TempFolder()
        var folders: [String] = []
        for (name, file) in [("first", Self.topology), ("second", try Self.plaintextQuickstart(in: home))] {
            let out = home.file(name)
            let status = try Self.run(into: out, file: file)
            #expect(status == 0, "quickstart \(name): exit \(status)")
            let wide = Self.widerThanOwner(out)
            #expect(wide.isEmpty, "readable by group or others: \(wide.prefix(10))")
            #expect(FileManager.default.fileExists(atPath: out + "/report.json"))
            folders.append(out)
        }
        let first = try Self.tokens(folders[0]), second = try Self.tokens(folders[1])
        #expect(!first.isEmpty && first.count == second.count)
        let shared = Set(first.values).intersection(second.values)
        #expect(shared.isEmpty, "tokens in both runs: \(shared)")
        for (folder, tokens) in zip(folders, [first, second]) {
            for (device, token) in tokens {
                let file = (try? String(contentsOfFile: "\(folder)/keys/\(device).token", encoding: .utf8)) ?? ""
                #expect(file.trimmingCharacters(in: .whitespacesAndNewlines) == token,
                        "\(folder): \(device)'s token file")
            }
        }
    }

    /// The files a local attacker would go for, by name (listing a 0700 folder fails for them).
    static let wanted = [
        "accounts.json", "topology.json5", "run.json", "events.jsonl", "server.sqlite", "report.json", "report.md",
        "events/server.jsonl", "events/broker.jsonl", "events/launcher.jsonl", "logs/server.log", "logs/broker.log",
        "keys/server.secret", "keys/launcher.secret", "keys/pixel.secret", "keys/pixel.token",
        "devices/pixel.sqlite",
    ]

    /// Another local user (uid nobody) polls the run folder's files while quickstart runs, from before the first
    /// file exists until the report is written, and reads nothing. Its home is made traversable (as a project
    /// folder holding `runs/` usually is), so only the run's own modes stand in the way.
    @Test(.enabled(if: getuid() == 0, "needs root: the poller is started as uid nobody with setpriv"))
    func anotherUserPollingTheRunFolderReadsNothing() throws {
        let home = TempFolder()
        chmod(home.path, 0o755)
        let out = home.file("run")
        // A file it may read, so an empty haul cannot come from a poller that reads nothing at all.
        _ = FileManager.default.createFile(atPath: home.file("canary"), contents: Data("canary\n".utf8),
                                       attributes: [.posixPermissions: 0o644])
        let script = "/bin/cat \(home.file("canary")); while [ ! -e \(home.file("done")) ]; do "
            + "for f in \(Self.wanted.joined(separator: " ")); do "
            + "/usr/bin/head -c 64 \(out)/$f 2>/dev/null && echo \"<- $f\"; done; done; true"
        let poller = try ChildProcess("/usr/bin/setpriv", [
            "--reuid=nobody", "--regid=nogroup", "--clear-groups", "/bin/sh", "-c", script,
        ], stdout: home.file("stolen"), stderr: home.file("poller.err"))
        let status = try Self.run(into: out)
        _ = FileManager.default.createFile(atPath: home.file("done"), contents: nil)
        #expect(poller.wait(timeout: 10) == 0, "the poller: \(poller.termination.map { "\($0)" } ?? "did not stop")")
        #expect(status == 0, "quickstart: exit \(status)")
        // Bytes, not text: a stolen SQLite page is not UTF-8.
        let bytes = FileManager.default.contents(atPath: home.file("stolen")) ?? Data()
        let haul = String(decoding: bytes, as: UTF8.self)
        #expect(haul.hasPrefix("canary\n"), "the poller could not read even the file it may read: \(haul.prefix(200))")
        let stolen = haul.hasPrefix("canary\n") ? String(haul.dropFirst(7)) : haul
        #expect(stolen.isEmpty, "uid nobody read: \(Set(stolen.split(separator: "\n").filter { $0.hasPrefix("<- ") }))")
        let errors = (try? String(contentsOfFile: home.file("poller.err"), encoding: .utf8)) ?? ""
        #expect(errors.isEmpty, "the poller failed: \(errors)")
    }
}
