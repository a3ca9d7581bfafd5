/// The one escaper of the lab's HTML and SVG (report.html, its timeline and plots, compare.html, the bench's growth
/// plot). Text and attribute values are escaped differently: text needs `&`, `<` and `>`; an attribute value, written
/// between double quotes, also needs `"`. Nothing else is escaped, so plain text stays byte for byte what it was.
public enum Markup {
    /// `text` safe as the content of an element.
    public static func text(_ text: String) -> String {
        escape(text, quotes: false)
    }

    /// `value` safe inside a double-quoted attribute.
    public static func attribute(_ value: String) -> String {
        escape(value, quotes: true)
    }

    static func escape(_ text: String, quotes: Bool) -> String {
        // Most report text has nothing to escape: hand it back without building a new string.
        guard text.utf8.contains(where: { $0 == 0x26 || $0 == 0x3C || $0 == 0x3E || (quotes && $0 == 0x22) }) else {
            return text
        }
        var out = ""
        out.reserveCapacity(text.utf8.count + 16)
        for character in text.unicodeScalars {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"" where quotes: out += "&quot;"
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }
}
