// The SyncServer module; see its issue.
