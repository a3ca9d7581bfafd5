import Foundation
import Testing

/// HANDBOOK.md's map and its "to add X, touch Y" rows name files, modules and types that exist, so the map cannot go
/// stale: every backticked path is a file or folder of the package, every backticked `Type` or `Type.member` is
/// declared in Sources or Tests (a member as a `let`, `var`, `func`, `case` or `static` of that name).
struct HandbookMapTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Every file of the package, relative to its root (build and git folders left out).
    static let files: [String] = {
        var out: [String] = []
        let skip: Set<String> = [".build", ".git", "runs", ".swiftpm"]
        let base = root.path + "/"
        guard let walker = FileManager.default.enumerator(atPath: root.path) else { return [] }
        while let path = walker.nextObject() as? String {
            if skip.contains(path.split(separator: "/").first.map(String.init) ?? "") {
                walker.skipDescendants()
                continue
            }
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: base + path, isDirectory: &isFolder), !isFolder.boolValue {
                out.append(path)
            }
        }
        return out
    }()

    static let swiftText: String = files.filter { $0.hasSuffix(".swift") }
        .compactMap { try? String(contentsOfFile: root.path + "/" + $0, encoding: .utf8) }.joined(separator: "\n")

    static let modules: Set<String> = {
        let package = (try? String(contentsOfFile: root.path + "/Package.swift", encoding: .utf8)) ?? ""
        let names = package.matches(of: /name: "([A-Za-z0-9-]+)"/).map { String($0.1) }
        return Set(names)
    }()

    /// The backticked words of a text.
    static func ticked(_ text: String) -> [String] {
        text.matches(of: /`([^`\n]+)`/).map { String($0.1) }
    }

    /// Whether a path the handbook names is a file or a folder of the package: as written from the root, or as the
    /// end of one (the handbook often writes a path inside its module: `Settings/DeviceSettings+Knobs.swift`).
    static func exists(path: String, in files: [String]) -> Bool {
        let path = path.hasSuffix("/") ? String(path.dropLast()) : path
        return files.contains { file in
            file == path || file.hasSuffix("/" + path) || file.hasPrefix(path + "/") || file.contains("/" + path + "/")
        }
    }

    static func isPath(_ word: String) -> Bool {
        guard word.wholeMatch(of: /[\w+.\/-]+/) != nil, !word.hasPrefix("../"), !word.contains("NAME") else {
            return false
        }
        return word.contains("/") || word.wholeMatch(of: /[\w+.-]+\.(swift|md|json5|modulemap|sh)/) != nil
    }

    /// The names Sources and Tests declare: types (after `struct`, `enum`, …, `extension`) and members (after
    /// `let`, `var`, `func`, `case`), from one pass over the words.
    static let declarations: (types: Set<String>, members: Set<String>) = {
        let typeWords: Set<Substring> = ["struct", "enum", "class", "protocol", "actor", "typealias", "extension"]
        let memberWords: Set<Substring> = ["let", "var", "func", "case"]
        var types: Set<String> = []
        var members: Set<String> = []
        let words = swiftText.split { !($0.isLetter || $0.isNumber || $0 == "_") }
        for (word, next) in zip(words, words.dropFirst()) {
            if typeWords.contains(word) { types.insert(String(next)) }
            if memberWords.contains(word) { members.insert(String(next)) }
        }
        return (types, members)
    }()

    /// Whether `Type` or `Type.member` is declared.
    static func declared(_ word: String, in declarations: (types: Set<String>, members: Set<String>)) -> Bool {
        let parts = word.split(separator: ".").map(String.init)
        guard let type = parts.first else { return false }
        if modules.contains(type) && parts.count == 1 { return true }
        guard declarations.types.contains(type) else { return false }
        return parts.count == 1 || declarations.members.contains(parts[1])
    }

    static func isType(_ word: String) -> Bool {
        word.wholeMatch(of: /[A-Z][A-Za-z0-9]*(\.[a-z][A-Za-z0-9]*)?/) != nil && !word.hasSuffix(".swift")
            && !word.hasSuffix(".md")
    }

    static let handbook = (try? String(contentsOf: root.appendingPathComponent("HANDBOOK.md"), encoding: .utf8)) ?? ""

    @Test func everyPathTheHandbookNamesExists() {
        let paths = Self.ticked(Self.handbook).filter(Self.isPath)
        #expect(paths.count > 50, "the handbook names its files")
        let missing = paths.filter { !Self.exists(path: $0, in: Self.files) }
        #expect(missing == [], "HANDBOOK.md names files that are not there")
    }

    @Test func everyTypeTheHandbookNamesIsDeclared() {
        let types = Self.ticked(Self.handbook).filter(Self.isType)
        #expect(types.count > 50, "the handbook names its types")
        let missing = Set(types.filter { !Self.declared($0, in: Self.declarations) }).sorted()
        #expect(missing == [], "HANDBOOK.md names types or members that are not declared")
    }

    /// The rows of "To add X, touch Y" in particular: each names at least one file that exists, and nothing missing.
    @Test func everyToAddRowNamesFilesThatExist() throws {
        let section = try #require(Self.handbook.components(separatedBy: "## To add X, touch Y").last?
            .components(separatedBy: "\n## ").first)
        let rows = section.split(separator: "\n").filter { $0.hasPrefix("| a") || $0.hasPrefix("| an") }
        #expect(rows.count >= 10)
        for row in rows {
            let paths = Self.ticked(String(row)).filter(Self.isPath)
            #expect(!paths.isEmpty, "\(row.prefix(60))")
            #expect(paths.allSatisfy { Self.exists(path: $0, in: Self.files) }, "\(row.prefix(60))")
        }
    }

    /// The checks can fail: a path and a type that are not there are seen as missing.
    @Test func aStalePathOrTypeIsSeen() {
        #expect(!Self.exists(path: "SyncServer/Settings/ServerGone.swift", in: Self.files))
        #expect(Self.exists(path: "SyncServer/Settings/ServerFaults.swift", in: Self.files))
        #expect(!Self.declared("ServerFaultsGone", in: Self.declarations))
        #expect(!Self.declared("ServerSettings.knobsGone", in: Self.declarations))
        #expect(Self.declared("ServerSettings.knobs", in: Self.declarations))
    }
}
