/// Which send of a hint this is: chaos may send a hint twice.
public enum DeliveryCopy: String, Sendable {
    case original, duplicate
}
