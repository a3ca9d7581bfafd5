import Foundation

extension String {
    /// The string spelled by `bytes` when they are well-formed UTF-8, else nil: what `String(validating:as:)` says,
    /// at a fraction of its cost (that initializer is generic over the sequence and the encoding; unspecialized, it
    /// looked up type metadata for every string, and was most of what a client spent decoding a page).
    init?(utf8Validating bytes: UnsafeBufferPointer<UInt8>) {
        // Decoding repairs ill-formed UTF-8 with U+FFFD, and the first repair makes the bytes differ from the input
        // (a well-formed U+FFFD at that place would have been read as itself): the same bytes mean well-formed.
        var value = String(decoding: bytes, as: UTF8.self)
        let same = value.withUTF8 { decoded in
            decoded.count == bytes.count
                && (decoded.isEmpty || memcmp(decoded.baseAddress!, bytes.baseAddress!, decoded.count) == 0)
        }
        guard same else { return nil }
        self = value
    }
}
