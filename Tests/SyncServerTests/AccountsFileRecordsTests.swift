import Foundation
import LabTestSupport
import LabKit
import Testing

@testable import SyncServer

@Suite("AccountsFile records")
struct AccountsFileRecordsTests {
    @Test("every device of the file becomes a record with its account; a bad file is the server's accounts error")
    func records() throws {
        let file = try AccountsFile.parse(Data(#"""
            {"accounts": [{"id": "acme", "devices": [{"id": "pixel", "platform": "android", "token": "t-3f9c"}]},
                          {"id": "solo", "devices": [{"id": "tab", "platform": "web", "token": "t-1"}]}]}
            """#.utf8), path: "accounts.json")
        #expect(file.records == [DeviceRecord(id: "pixel", account: "acme", platform: .android, token: "t-3f9c"),
                                 DeviceRecord(id: "tab", account: "solo", platform: .web, token: "t-1")])
        let error = AccountsFileError(path: "a.json", key: "accounts", problem: "is missing")
        #expect(ServerError(error) == .accounts(path: "a.json", key: "accounts", problem: "is missing"))
        #expect(ServerError(error).description == "a.json: accounts: is missing")
    }
}
