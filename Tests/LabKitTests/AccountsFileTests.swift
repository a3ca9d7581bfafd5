import Foundation
import LabKit
import SyncProtocol
import Testing

@Suite("AccountsFile")
struct AccountsFileTests {
    func parse(_ text: String) throws(AccountsFileError) -> AccountsFile {
        try AccountsFile.parse(Data(text.utf8), path: "accounts.json")
    }

    @Test("reads the documented format, with JSON5 comments")
    func reads() throws {
        let file = try parse("""
            // written by the launcher
            {"accounts": [{"id": "acme", "devices": [{"id": "pixel", "platform": "android", "token": "t-3f9c"}]}]}
            """)
        #expect(file == AccountsFile(accounts: [
            .init(id: "acme", devices: [.init(id: "pixel", platform: .android, token: "t-3f9c")]),
        ]))
    }

    @Test("every error names the file and the key that is wrong")
    func errors() {
        let cases: [(String, String)] = [
            (#"{"accounts": [{"id": "a", "devices": [{"id": "d", "platform": "ios"}]}]}"#,
             "accounts.json: accounts[0].devices[0].token: is missing"),
            (#"{"accounts": [{"id": "a", "devices": [{"id": "d", "platform": "nokia", "token": "t"}]}]}"#,
             "accounts.json: accounts[0].devices[0].platform: must be one of android, ios, web"),
            (#"{"accounts": [{"id": "", "devices": []}]}"#, "accounts.json: accounts[0].id: is empty"),
            (#"{"accounts": [{"id": "a", "devices": 3}]}"#, "accounts.json: accounts[0].devices: must be an array"),
            (#"{"accounts": [{"id": "a", "devices": [{"id": "d", "platform": "web", "token": "t"}]},"#
                + #"{"id": "b", "devices": [{"id": "d", "platform": "web", "token": "u"}]}]}"#,
             "accounts.json: accounts[1].devices[0].id: device \"d\" appears twice"),
            (#"{"accounts": [{"id": "a", "devices": []}, {"id": "a", "devices": []}]}"#,
             "accounts.json: accounts[1].id: account \"a\" appears twice"),
            ("{}", "accounts.json: accounts: is missing"),
        ]
        for (text, message) in cases {
            do {
                _ = try parse(text)
                Issue.record("accepted: \(text)")
            } catch {
                #expect(error.description == message)
            }
        }
    }

    @Test("a missing file says so")
    func missingFile() {
        #expect(throws: AccountsFileError(path: "/nonexistent/accounts.json", key: "",
                                          problem: "cannot read the accounts file: No such file or directory")) {
            _ = try AccountsFile.load(path: "/nonexistent/accounts.json")
        }
    }

    static let keyA = String(repeating: "a", count: 40)
    static let keyB = String(repeating: "b", count: 40)

    /// Two devices of acme with keys, and `pools` as given.
    func withPools(_ pools: String) -> String {
        #"{"accounts": [{"id": "acme", "devices": [{"id": "pixel", "platform": "android", "token": "t", "#
            + #""publicKey": "\#(Self.keyA)"}, {"id": "iphone", "platform": "ios", "token": "u"}]}], "pools": "#
            + pools + "}"
    }

    @Test("a pool's key is admitted as the pool, and speaks for exactly its devices")
    func pools() throws {
        let key = String(repeating: "p", count: 40)
        let file = try parse(withPools(#"[{"id": "pool-1", "publicKey": "\#(key)", "devices": ["pixel", "iphone"]}]"#))
        #expect(file.poolsByPublicKey == [key: "pool-1"])
        #expect(file.poolMembers == ["pool-1": ["pixel", "iphone"]])
        #expect(file.devicesByPublicKey == [Self.keyA: "pixel"], "a pool's key is no device's")
        #expect(try parse(withPools("[]")).poolMembers.isEmpty)
    }

    @Test("a bad pool names the file and the key")
    func poolErrors() {
        let key = String(repeating: "p", count: 40)
        let cases: [(String, String)] = [
            (#"[{"id": "pixel", "publicKey": "\#(key)", "devices": []}]"#,
             #"accounts.json: pools[0].id: "pixel" is already a device's or another pool's id"#),
            (#"[{"id": "p", "publicKey": "\#(key)", "devices": []}, {"id": "p", "publicKey": "\#(Self.keyB)", "#
                + #""devices": []}]"#, #"accounts.json: pools[1].id: "p" is already a device's or another pool's id"#),
            (#"[{"id": "p", "publicKey": "short", "devices": []}]"#,
             "accounts.json: pools[0].publicKey: must be a CURVE public key: 40 characters of Z85"),
            (#"[{"id": "p", "publicKey": "\#(Self.keyA)", "devices": []}]"#,
             "accounts.json: pools[0].publicKey: is the key of another device too"),
            (#"[{"id": "p", "publicKey": "\#(key)", "devices": ["laptop"]}]"#,
             #"accounts.json: pools[0].devices[0]: "laptop" is no device of the file"#),
            (#"[{"id": "p", "publicKey": "\#(key)", "devices": ["pixel"]}, {"id": "q", "publicKey": "\#(Self.keyB)", "#
                + #""devices": ["pixel"]}]"#, #"accounts.json: pools[1].devices[0]: "pixel" is in another pool too"#),
            (#"[{"id": "p", "devices": []}]"#, "accounts.json: pools[0].publicKey: is missing"),
        ]
        for (pools, message) in cases {
            do {
                _ = try parse(withPools(pools))
                Issue.record("accepted: \(pools)")
            } catch {
                #expect(error.description == message)
            }
        }
    }
}
