import Foundation
import Testing

/// STYLE.md's size limits, held by a test so they cannot drift again: no line of a Swift file in Sources/ or Tests/
/// over 120 columns (characters, not bytes), and no such file over 500 lines.
struct SizeLimitTests {
    static let maxColumns = 120
    static let maxLines = 500

    /// Files still over a limit, each with why. None today (issue 25 split the last ones); an entry added here
    /// must say why, and `everyExceptionIsStillNeeded` fails on an entry that no longer breaks its limit.
    static let longLineExceptions: Set<String> = []
    static let longFileExceptions: Set<String> = []

    /// Every Swift file of Sources/ and Tests/, relative to the package's root, with its lines.
    static let swiftFiles: [(path: String, lines: [Substring])] = HandbookMapTests.files
        .filter { ($0.hasPrefix("Sources/") || $0.hasPrefix("Tests/")) && $0.hasSuffix(".swift") }
        .sorted()
        .compactMap { path in
            guard let text = try? String(contentsOfFile: HandbookMapTests.root.path + "/" + path, encoding: .utf8)
            else { return nil }
            return (path, text.split(separator: "\n", omittingEmptySubsequences: false))
        }

    /// The numbers (from 1) of the lines longer than `maxColumns` characters.
    static func longLines(_ lines: [Substring]) -> [Int] {
        lines.indices.filter { lines[$0].count > maxColumns }.map { $0 + 1 }
    }

    /// Lines of a file as an editor counts them: a final newline does not start another line.
    static func lineCount(_ lines: [Substring]) -> Int {
        lines.last == "" ? lines.count - 1 : lines.count
    }

    @Test func noLineIsOver120Columns() {
        #expect(Self.swiftFiles.count > 300, "the test reads the package's files")
        let long = Self.swiftFiles.filter { !Self.longLineExceptions.contains($0.path) }.flatMap { file in
            Self.longLines(file.lines).map { "\(file.path):\($0)" }
        }
        #expect(long == [], "lines over \(Self.maxColumns) columns")
    }

    @Test func noFileIsOver500Lines() {
        let large = Self.swiftFiles.filter { !Self.longFileExceptions.contains($0.path) }
            .filter { Self.lineCount($0.lines) > Self.maxLines }
            .map { "\($0.path): \(Self.lineCount($0.lines)) lines" }
        #expect(large == [], "files over \(Self.maxLines) lines: split them into Type+Concern.swift files")
    }

    @Test func everyExceptionIsStillNeeded() {
        let byPath = Dictionary(Self.swiftFiles.map { ($0.path, $0.lines) }, uniquingKeysWith: { a, _ in a })
        for path in Self.longLineExceptions {
            #expect(byPath[path].map { !Self.longLines($0).isEmpty } == true, "\(path) has no long line now")
        }
        for path in Self.longFileExceptions {
            #expect(byPath[path].map { Self.lineCount($0) > Self.maxLines } == true, "\(path) is short enough now")
        }
    }

    /// The checks can fail: a long line and a long file are seen, and characters count, not bytes.
    @Test func aLongLineAndALongFileAreSeen() {
        let fine = String(repeating: "é", count: 120)
        let long = String(repeating: "a", count: 121)
        #expect(Self.longLines([Substring(fine), Substring(long), "x"]) == [2])
        let file = Array(repeating: Substring("x"), count: 501) + [""]
        #expect(Self.lineCount(file) == 501 && Self.lineCount(Array(file.dropFirst())) == 500)
    }
}
