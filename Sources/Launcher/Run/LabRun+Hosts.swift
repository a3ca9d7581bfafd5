import Foundation

extension LabRun {
    /// The last 64 KiB of `name`'s events file: read here, or over ssh from its host while the run lasts (the file
    /// comes back only at the end, docs/HOSTS.md).
    func eventsTail(_ name: String) -> String? {
        if let hosts { return hosts.eventsTail(name) }
        guard let handle = FileHandle(forReadingAtPath: folder.eventsPath(for: name)) else { return nil }
        defer { try? handle.close() }
        let size = (try? handle.seekToEnd()) ?? 0
        try? handle.seek(toOffset: size > 65_536 ? size - 65_536 : 0)
        return String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
    }
}
