#ifndef SYNCLAB_CSQLITE_SHIM_H
#define SYNCLAB_CSQLITE_SHIM_H
#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift cannot import.
static inline void (*synclab_sqlite_transient(void))(void *) { return SQLITE_TRANSIENT; }
#endif
