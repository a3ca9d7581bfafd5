// The SyncDevice module; see its issue.
