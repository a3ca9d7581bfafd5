/// A key seen twice is malformed: the strict path says so.
func once<T>(_ previous: T?, _ value: T) throws(BodyReader.Unsure) -> T {
    guard previous == nil else { throw BodyReader.Unsure() }
    return value
}

func need<T>(_ value: T?) throws(BodyReader.Unsure) -> T {
    guard let value else { throw BodyReader.Unsure() }
    return value
}
