#ifndef SYNCLAB_WAL_BUFFER_H
#define SYNCLAB_WAL_BUFFER_H
#include <sqlite3.h>

// A VFS over the default one ("unix") that gathers a WAL file's writes in memory and hands them to the kernel in one
// write: SQLite writes each WAL frame as two writes (its 24-byte header, then the page), so a commit of four pages
// costs eight pwrite(2) calls; through this VFS it costs one. Every other file goes straight to the default VFS.
//
// The gathered bytes reach the kernel before anything could read them or depend on them: before a read, a sync, a
// truncation, a size query or a close of the WAL file, before a write that does not follow them, and at the end of
// every commit (the WAL hook `synclab_wal_buffer_attach` installs), before the statement that committed returns. So
// a commit that returned is in the kernel's page cache exactly as without this VFS, and a SIGKILL loses only what
// was never acknowledged.
//
// Only for a connection that keeps its file to itself (`PRAGMA locking_mode=EXCLUSIVE`, wal-index in the heap):
// another connection, in this process or another, reads the WAL through a handle of its own and could be told of
// frames that are still in this one's memory. docs/PERFORMANCE.md, "one write per commit".

// The VFS's name; registered (not as the default) by the first call.
const char *synclab_wal_buffer_vfs(void);

// Installs the commit-end flush on `db` (opened through the VFS above): a WAL hook that writes what the WAL file
// gathered, then checkpoints as SQLite's default hook does (at 1,000 frames). Replaces SQLite's automatic
// checkpoint hook, so `PRAGMA wal_autocheckpoint` must not be used on `db` afterwards. Returns SQLITE_OK.
int synclab_wal_buffer_attach(sqlite3 *db);

// The writes SQLite asked of `db`'s WAL file since it was opened, and the writes the kernel was given for them:
// returns 1, or 0 (nothing set) when the WAL is not open or not this VFS's.
int synclab_wal_buffer_counts(sqlite3 *db, long long *writes, long long *flushes);
#endif
