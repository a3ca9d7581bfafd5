/// A test could not go on: what it needs could not be set up (a missing executable, a child that would not start), or
/// what it waited for did not come.
public struct TestFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
    public static func setup(_ description: String) -> TestFailure { TestFailure(description) }
}
