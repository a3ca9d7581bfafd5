/// One HTML or SVG element built as a value: a name, attributes in the order given, and children (elements, text,
/// or markup made elsewhere). `render()` writes it with every attribute value and text escaped by `Markup`, so a
/// caller never escapes by hand and never forgets to.
public struct Element: Sendable {
    /// What an element holds.
    public enum Child: Sendable {
        case element(Element)
        /// Text, escaped when rendered.
        case text(String)
        /// Markup made elsewhere (another renderer's output), written as it is.
        case raw(String)
    }

    public let name: String
    public private(set) var attributes: [(name: String, value: String)]
    public private(set) var children: [Child]
    /// Written `<name …/>` when it has no children (SVG's shapes); otherwise always `<name …></name>`.
    public let selfClosing: Bool

    public init(_ name: String, _ attributes: KeyValuePairs<String, String> = [:], selfClosing: Bool = false) {
        self.name = name
        self.attributes = attributes.map { (name: $0.key, value: $0.value) }
        self.children = []
        self.selfClosing = selfClosing
    }

    /// The element with one more attribute (after the others); `nil` adds nothing, for an attribute only some
    /// elements carry.
    public func attribute(_ name: String, _ value: String?) -> Element {
        guard let value else { return self }
        var copy = self
        copy.attributes.append((name: name, value: value))
        return copy
    }

    /// The element with `child` appended.
    public func child(_ child: Element) -> Element { appending(.element(child)) }

    /// The element with text appended (escaped when rendered).
    public func text(_ text: String) -> Element { appending(.text(text)) }

    /// The element with markup made elsewhere appended, as it is.
    public func raw(_ markup: String) -> Element { appending(.raw(markup)) }

    /// The element with every one of `children` appended.
    public func children(_ children: [Element]) -> Element {
        var copy = self
        copy.children += children.map { .element($0) }
        return copy
    }

    private func appending(_ child: Child) -> Element {
        var copy = self
        copy.children.append(child)
        return copy
    }

    /// Its markup.
    public func render() -> String {
        var out = ""
        render(into: &out)
        return out
    }

    public func render(into out: inout String) {
        out += "<" + name
        for attribute in attributes {
            out += " " + attribute.name + "=\"" + Markup.attribute(attribute.value) + "\""
        }
        if children.isEmpty && selfClosing {
            out += "/>"
            return
        }
        out += ">"
        for child in children {
            switch child {
            case .element(let element): element.render(into: &out)
            case .text(let text): out += Markup.text(text)
            case .raw(let markup): out += markup
            }
        }
        out += "</" + name + ">"
    }
}
