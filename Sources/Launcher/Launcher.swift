// The Launcher module; see its issue.
