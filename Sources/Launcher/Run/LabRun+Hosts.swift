import Foundation

extension LabRun {
    /// The last 64 KiB of `name`'s events file: read here, or over ssh from its host while the run lasts (the file
    /// comes back only at the end, docs/HOSTS.md).
    func eventsTail(_ name: String) -> String? {
        hosts?.eventsTail(name) ?? folder.tail(of: name)
    }
}

extension RunFolder {
    /// The last 64 KiB of a process's events file here.
    func tail(of process: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: eventsPath(for: process)) else { return nil }
        defer { try? handle.close() }
        let size = (try? handle.seekToEnd()) ?? 0
        try? handle.seek(toOffset: size > 65_536 ? size - 65_536 : 0)
        return String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
    }
}
