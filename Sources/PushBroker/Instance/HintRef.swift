/// A hint as the instance and its directives carry it: its number (`h-<number>`) and the head it names, two integers
/// instead of a String made for every hint. The id is spelled only where it is written out (events, the body).
public struct HintRef: Sendable, Equatable {
    public let number: Int
    public let head: Int

    public init(number: Int, head: Int) {
        self.number = number
        self.head = head
    }

    /// `h-<number>`, as the wire and the events spell it.
    public var id: String { HintID.text(number) }
}
