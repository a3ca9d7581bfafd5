// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "SyncLab",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "synclab", targets: ["synclab"]),
        .executable(name: "synclab-server", targets: ["synclab-server"]),
        .executable(name: "synclab-broker", targets: ["synclab-broker"]),
        .executable(name: "synclab-device", targets: ["synclab-device"]),
    ],
    targets: [
        // C libraries, found in /usr/include; Debian's libzmq.pc adds krb5 flags SwiftPM rejects, so no pkgConfig.
        .systemLibrary(name: "CZeroMQ", providers: [.apt(["libzmq3-dev"])]),
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        // The bench's peers: the NATS C client and hiredis (the servers themselves are started by `synclab bench`).
        .systemLibrary(name: "CNats", providers: [.apt(["libnats-dev"])]),
        .systemLibrary(name: "CHiredis", providers: [.apt(["libhiredis-dev"])]),
        // The few OS calls Swift cannot import (prctl is variadic).
        .target(name: "CSystem"),
        // A VFS that hands a WAL commit's writes to the kernel in one write (for connections with exclusive locking).
        .target(name: "CSQLiteWAL", dependencies: ["CSQLite"]),

        // Thin bindings.
        .target(name: "ZeroMQ", dependencies: ["CZeroMQ"]),
        .target(name: "SQLite", dependencies: ["CSQLite", "CSQLiteWAL"]),

        // The one HTML/SVG builder and escaper of the report, compare.html and the bench's plot.
        .target(name: "Markup"),

        // The wire protocol shared by every role.
        .target(name: "SyncProtocol"),
        // Clock, seeded generator, event log, command lines, signals: what every process needs.
        .target(name: "LabKit", dependencies: ["SyncProtocol", "CSystem"]),
        // The one control client: the launcher, `synclab-device control` and the tests talk to a process with it.
        .target(name: "LabControl", dependencies: ["ZeroMQ", "SyncProtocol", "LabKit"]),

        // The roles.
        .target(name: "SyncServer", dependencies: ["ZeroMQ", "SQLite", "SyncProtocol", "LabKit"]),
        .target(name: "PushBroker", dependencies: ["ZeroMQ", "SyncProtocol", "LabKit"]),
        .target(name: "SyncDevice", dependencies: ["ZeroMQ", "SQLite", "SyncProtocol", "LabKit"]),
        // The same instances and stores in one process, on a simulated network and clock (docs/SIMULATION.md).
        .target(name: "Simulation", dependencies: ["SQLite", "SyncProtocol", "LabKit", "SyncDevice", "SyncServer",
                                                   "PushBroker"]),
        .target(name: "Launcher", dependencies: ["ZeroMQ", "SQLite", "SyncProtocol", "LabKit", "LabControl", "SyncDevice",
                                                 "SyncServer", "PushBroker", "Simulation", "Markup"]),
        // `synclab bench`: the floors, the lab's figures and the NATS and Redis peers; only this target links their
        // clients, so the launcher and every role stay free of them.
        .target(name: "Bench", dependencies: ["Launcher", "ZeroMQ", "SQLite", "SyncProtocol", "LabKit", "LabControl", "CNats",
                                              "CHiredis", "CSystem", "Markup"]),

        // Thin executables.
        .executableTarget(name: "synclab", dependencies: ["Launcher", "Bench", "LabKit"]),
        .executableTarget(name: "synclab-server", dependencies: ["SyncServer", "LabKit"]),
        .executableTarget(name: "synclab-broker", dependencies: ["PushBroker", "LabKit"]),
        .executableTarget(name: "synclab-device", dependencies: ["SyncDevice", "LabKit", "LabControl"]),

        // What the test targets share: child processes, temp folders, where the built executables are, running
        // blocking work on a thread of its own, and the one device-protocol client (`TestClient`).
        .target(name: "LabTestSupport", dependencies: ["ZeroMQ", "SyncProtocol"], path: "Tests/LabTestSupport"),
        .testTarget(name: "LabTestSupportTests", dependencies: ["LabTestSupport", "ZeroMQ", "SyncProtocol"]),
        .testTarget(name: "ZeroMQTests", dependencies: ["ZeroMQ", "LabTestSupport"]),
        .testTarget(name: "SQLiteTests", dependencies: ["SQLite", "LabTestSupport"]),
        .testTarget(name: "SyncProtocolTests", dependencies: ["SyncProtocol"]),
        .testTarget(name: "MarkupTests", dependencies: ["Markup"]),
        .testTarget(name: "LabKitTests", dependencies: ["LabKit", "SyncProtocol", "LabTestSupport"]),
        .testTarget(name: "SyncServerTests",
                    dependencies: ["SyncServer", "ZeroMQ", "SQLite", "SyncProtocol", "LabKit", "LabControl",
                                   "LabTestSupport"]),
        .testTarget(name: "PushBrokerTests",
                    dependencies: ["PushBroker", "ZeroMQ", "SyncProtocol", "LabKit", "LabControl", "LabTestSupport"]),
        .testTarget(name: "SyncDeviceTests",
                    dependencies: ["SyncDevice", "ZeroMQ", "SQLite", "SyncProtocol", "LabKit", "LabControl",
                                   "LabTestSupport"]),
        // The hostile-client suite: real CURVE processes attacked from outside (docs/SECURITY.md).
        .testTarget(name: "SecurityTests",
                    dependencies: ["SyncServer", "ZeroMQ", "SQLite", "SyncProtocol", "LabKit", "LabControl",
                                   "LabTestSupport"]),
        .testTarget(name: "BenchUnitTests", dependencies: ["Bench", "CHiredis"]),
        .testTarget(name: "LauncherTests",
                    dependencies: ["Launcher", "ZeroMQ", "SQLite", "SyncProtocol", "LabKit", "LabControl", "SyncDevice",
                                   "SyncServer", "PushBroker", "Simulation", "LabTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
