import Foundation

/// A value written by one thread and read by another.
public final class Box<Value: Sendable>: @unchecked Sendable {  // every access goes through `lock`
    private let lock = NSLock()
    private var stored: Value

    public init(_ value: Value) { stored = value }

    public var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
