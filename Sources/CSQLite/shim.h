#ifndef SYNCLAB_CSQLITE_SHIM_H
#define SYNCLAB_CSQLITE_SHIM_H
#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift cannot import.
static inline void (*synclab_sqlite_transient(void))(void *) { return SQLITE_TRANSIENT; }

// sqlite3_config is variadic, which Swift cannot call. Turns off the memory statistics, before the first connection
// opens: with them on, every allocation SQLite makes takes a global mutex to count itself (≈ 95 of each a device's
// receiving pass). Returns SQLITE_OK, or SQLITE_MISUSE when SQLite was already initialized (then nothing changed).
static inline int synclab_sqlite_memstatus_off(void) { return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); }
#endif
