import Foundation
import LabTestSupport
import LabKit
import SyncServer
import Testing
import ZeroMQ

/// The pieces under the suite: key files, token hashing, the refusal limiter.
@Suite struct KeyFileTests {
    @Test func keyPairRoundTripsThroughFilesAndDerivesItsPublicKey() throws {
        let folder = TempFolder()
        let pair = try CurveKeyPair.generate()
        let paths = try pair.write(to: folder.file("keys"), name: "x")
        #expect(try CurveKeyPair.read(secretFile: paths.secret) == pair)
        #expect(try CurveKeyPair.read(publicFile: paths.public) == pair.publicKey)
        var info = stat()
        stat(paths.secret, &info)
        #expect(info.st_mode & 0o777 == 0o600)
        #expect(CurveKeyPair.z85(CurveKeyPair.bytes(z85: pair.publicKey)!) == pair.publicKey)
    }

    @Test func secretKeyFileReadableByOthersIsRefused() throws {
        let folder = TempFolder()
        let paths = try CurveKeyPair.generate().write(to: folder.file("keys"), name: "x")
        chmod(paths.secret, 0o644)
        #expect(throws: CurveKeyError.self) { try CurveKeyPair.read(secretFile: paths.secret) }
        try "not a key\n".write(toFile: folder.file("bad.public"), atomically: true, encoding: .utf8)
        #expect(throws: CurveKeyError.self) { try CurveKeyPair.read(publicFile: folder.file("bad.public")) }
    }

    @Test func tokensAreStoredAsSHA256() {
        // FIPS 180-4's test vector "abc".
        #expect(TokenHash.stored("abc") == "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(TokenHash.matches(stored: TokenHash.stored("t-1"), presented: "t-1"))
        #expect(!TokenHash.matches(stored: TokenHash.stored("t-1"), presented: "t-2"))
        #expect(TokenHash.stored(TokenHash.stored("t-1")) == TokenHash.stored("t-1"))
    }

    @Test func limiterHoldsBackPastItsRateAndCountsWhatItHeldBack() {
        var limiter = RefusalLimiter(perPeer: 3, total: 5)
        let second: UInt64 = 1_000_000_000
        let first = (0..<10).map { _ in limiter.admit(peer: "a", nanos: second).write }
        #expect(first.filter { $0 }.count == 3)
        #expect(limiter.admit(peer: "b", nanos: second).write)
        #expect(limiter.admit(peer: "c", nanos: second).write)
        #expect(!limiter.admit(peer: "d", nanos: second).write, "the total limit")
        let next = limiter.admit(peer: "a", nanos: 2 * second)
        #expect(next.write && next.suppressed == 7)
        #expect(limiter.suppressedTotal == 8)
    }
}
