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
}
