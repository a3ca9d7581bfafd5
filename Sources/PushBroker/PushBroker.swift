// The PushBroker module; see its issue.
