/// Where the simulated processes' SQLite databases live (`synclab sim --storage`). Either way the same `Ledger` and
/// `ServerStore` code runs on real SQLite; only the storage under it differs, and nothing a process decides depends
/// on it, so both give the same `events.jsonl` and `report.json`.
public enum SimStorage: String, Sendable, CaseIterable {
    /// Each database a WAL file in the run folder, as in a real run: three descriptors per device (the file, its
    /// `-wal`, its `-shm`), and the commits and checkpoints go through the kernel.
    case files
    /// Each database in this process's memory (SQLite's memdb), kept by a connection of the world's own so a
    /// killed process's database outlives it, and written to its file in the run folder when the run ends, so the
    /// folder is the same one a real run leaves.
    case memory

    /// Up to this many devices `auto` keeps the files (every shipped topology); above, memory.
    public static let filesUpTo = 100

    /// The storage `auto` picks for a run of `devices` devices.
    public static func automatic(devices: Int) -> SimStorage { devices <= filesUpTo ? .files : .memory }
}
