/// Routing ids in events: readable text when a peer chose a printable id, hex otherwise (libzmq's generated ids
/// start with a zero byte).
public enum PeerName {
    public static func describe(_ peer: [UInt8]) -> String {
        if !peer.isEmpty, peer.allSatisfy({ (0x21...0x7E).contains($0) }) {
            return String(decoding: peer, as: UTF8.self)
        }
        return "0x" + peer.map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
    }
}
