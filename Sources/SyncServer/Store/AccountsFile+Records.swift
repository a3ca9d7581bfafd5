import LabKit

extension AccountsFile {
    /// Every device with its account, as the server stores it.
    public var records: [DeviceRecord] {
        accounts.flatMap { account in
            account.devices.map { DeviceRecord(id: $0.id, account: account.id, platform: $0.platform, token: $0.token,
                                                    publicKey: $0.publicKey) }
        }
    }
}

extension ServerError {
    init(_ error: AccountsFileError) {
        self = .accounts(path: error.path, key: error.key, problem: error.problem)
    }
}
