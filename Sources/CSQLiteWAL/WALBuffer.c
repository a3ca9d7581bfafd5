#include "WALBuffer.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

// A WAL file opened through the VFS: our methods, the default VFS's file right after this struct, and the writes
// gathered since the last flush (`length` bytes that belong at `start`).
typedef struct BufferedFile {
    sqlite3_file base;
    sqlite3_file *real;
    unsigned char *bytes;
    sqlite3_int64 start;
    int length;
    int capacity;
    // The first error a flush met: the WAL no longer holds what SQLite believes it wrote, so every later call on the
    // file fails with it (the connection can only be closed; reopening recovers from what reached the file).
    int failed;
    // The writes SQLite asked for and the writes they became (for tests and profiles).
    long long writes;
    long long flushes;
} BufferedFile;

// The most bytes gathered before they go: a commit of many pages goes as a few writes of this size.
#define GATHER_MAX (256 * 1024)

static int flush(BufferedFile *file) {
    if (file->failed) return file->failed;
    if (file->length == 0) return SQLITE_OK;
    int rc = file->real->pMethods->xWrite(file->real, file->bytes, file->length, file->start);
    file->flushes += 1;
    file->length = 0;
    if (rc != SQLITE_OK) file->failed = rc;
    return rc;
}

// Flushes, then hands the call to the default VFS's file.
#define FLUSHED(file, call)                                                                                          \
    do {                                                                                                             \
        BufferedFile *buffered = (BufferedFile *)(file);                                                             \
        int flushed = flush(buffered);                                                                               \
        if (flushed != SQLITE_OK) return flushed;                                                                    \
        return buffered->real->pMethods->call;                                                                       \
    } while (0)
#define REAL(file) (((BufferedFile *)(file))->real)

static int bufferedClose(sqlite3_file *file) {
    BufferedFile *buffered = (BufferedFile *)file;
    int flushed = flush(buffered);
    int closed = buffered->real->pMethods->xClose(buffered->real);
    free(buffered->bytes);
    buffered->bytes = NULL;
    return flushed != SQLITE_OK ? flushed : closed;
}

static int bufferedRead(sqlite3_file *file, void *out, int amount, sqlite3_int64 offset) {
    FLUSHED(file, xRead(buffered->real, out, amount, offset));
}

// Makes room for `amount` more gathered bytes; 0 when there is no memory for them.
static int reserve(BufferedFile *buffered, int amount) {
    if (buffered->length + amount <= buffered->capacity) return 1;
    int capacity = buffered->capacity ? buffered->capacity : 8192;
    while (capacity < buffered->length + amount) capacity *= 2;
    unsigned char *grown = realloc(buffered->bytes, (size_t)capacity);
    if (!grown) return 0;
    buffered->bytes = grown;
    buffered->capacity = capacity;
    return 1;
}

static int bufferedWrite(sqlite3_file *file, const void *data, int amount, sqlite3_int64 offset) {
    BufferedFile *buffered = (BufferedFile *)file;
    if (buffered->failed) return buffered->failed;
    buffered->writes += 1;
    int follows = buffered->length > 0 && offset == buffered->start + buffered->length;
    if (!follows || buffered->length + amount > GATHER_MAX) {
        int rc = flush(buffered);
        if (rc != SQLITE_OK) return rc;
        buffered->start = offset;
    }
    // A write that could never be gathered, or no memory to gather in: what is gathered goes, then this write as it is.
    if (amount > GATHER_MAX || !reserve(buffered, amount)) {
        int rc = flush(buffered);
        if (rc != SQLITE_OK) return rc;
        buffered->flushes += 1;
        return buffered->real->pMethods->xWrite(buffered->real, data, amount, offset);
    }
    memcpy(buffered->bytes + buffered->length, data, (size_t)amount);
    buffered->length += amount;
    return SQLITE_OK;
}

static int bufferedTruncate(sqlite3_file *file, sqlite3_int64 size) { FLUSHED(file, xTruncate(buffered->real, size)); }
static int bufferedSync(sqlite3_file *file, int flags) { FLUSHED(file, xSync(buffered->real, flags)); }
static int bufferedFileSize(sqlite3_file *file, sqlite3_int64 *size) {
    FLUSHED(file, xFileSize(buffered->real, size));
}
static int bufferedLock(sqlite3_file *file, int level) { return REAL(file)->pMethods->xLock(REAL(file), level); }
static int bufferedUnlock(sqlite3_file *file, int level) { return REAL(file)->pMethods->xUnlock(REAL(file), level); }
static int bufferedCheckReservedLock(sqlite3_file *file, int *out) {
    return REAL(file)->pMethods->xCheckReservedLock(REAL(file), out);
}
static int bufferedFileControl(sqlite3_file *file, int op, void *arg) {
    FLUSHED(file, xFileControl(buffered->real, op, arg));
}
static int bufferedSectorSize(sqlite3_file *file) { return REAL(file)->pMethods->xSectorSize(REAL(file)); }
static int bufferedDeviceCharacteristics(sqlite3_file *file) {
    return REAL(file)->pMethods->xDeviceCharacteristics(REAL(file));
}
static int bufferedShmMap(sqlite3_file *file, int region, int size, int extend, void volatile **out) {
    return REAL(file)->pMethods->xShmMap(REAL(file), region, size, extend, out);
}
static int bufferedShmLock(sqlite3_file *file, int offset, int n, int flags) {
    return REAL(file)->pMethods->xShmLock(REAL(file), offset, n, flags);
}
static void bufferedShmBarrier(sqlite3_file *file) { REAL(file)->pMethods->xShmBarrier(REAL(file)); }
static int bufferedShmUnmap(sqlite3_file *file, int delete) {
    return REAL(file)->pMethods->xShmUnmap(REAL(file), delete);
}
static int bufferedFetch(sqlite3_file *file, sqlite3_int64 offset, int amount, void **out) {
    FLUSHED(file, xFetch(buffered->real, offset, amount, out));
}
static int bufferedUnfetch(sqlite3_file *file, sqlite3_int64 offset, void *page) {
    return REAL(file)->pMethods->xUnfetch(REAL(file), offset, page);
}

static const sqlite3_io_methods bufferedMethods = {
    3, bufferedClose, bufferedRead, bufferedWrite, bufferedTruncate, bufferedSync, bufferedFileSize, bufferedLock,
    bufferedUnlock, bufferedCheckReservedLock, bufferedFileControl, bufferedSectorSize,
    bufferedDeviceCharacteristics, bufferedShmMap, bufferedShmLock, bufferedShmBarrier, bufferedShmUnmap,
    bufferedFetch, bufferedUnfetch,
};

// The VFS: a WAL file gets our methods over the default VFS's file; any other file is the default VFS's own file.
static sqlite3_vfs vfs;

static sqlite3_vfs *base(void) { return (sqlite3_vfs *)vfs.pAppData; }

static int bufferedOpen(sqlite3_vfs *self, sqlite3_filename name, sqlite3_file *file, int flags, int *outFlags) {
    (void)self;
    // Our methods only where the default VFS gives a file version 3's methods, which this struct forwards in full.
    if (!(flags & SQLITE_OPEN_WAL)) return base()->xOpen(base(), name, file, flags, outFlags);
    BufferedFile *buffered = (BufferedFile *)file;
    memset(buffered, 0, sizeof *buffered);
    buffered->real = (sqlite3_file *)(buffered + 1);
    int rc = base()->xOpen(base(), name, buffered->real, flags, outFlags);
    if (rc != SQLITE_OK) return rc;
    if (!buffered->real->pMethods || buffered->real->pMethods->iVersion < 3) {
        if (buffered->real->pMethods) buffered->real->pMethods->xClose(buffered->real);
        return SQLITE_CANTOPEN;
    }
    buffered->base.pMethods = &bufferedMethods;
    return SQLITE_OK;
}

static int bufferedDelete(sqlite3_vfs *self, const char *name, int sync) {
    (void)self;
    return base()->xDelete(base(), name, sync);
}
static int bufferedAccess(sqlite3_vfs *self, const char *name, int flags, int *out) {
    (void)self;
    return base()->xAccess(base(), name, flags, out);
}
static int bufferedFullPathname(sqlite3_vfs *self, const char *name, int size, char *out) {
    (void)self;
    return base()->xFullPathname(base(), name, size, out);
}
static void *bufferedDlOpen(sqlite3_vfs *self, const char *name) {
    (void)self;
    return base()->xDlOpen(base(), name);
}
static void bufferedDlError(sqlite3_vfs *self, int size, char *out) {
    (void)self;
    base()->xDlError(base(), size, out);
}
static void (*bufferedDlSym(sqlite3_vfs *self, void *library, const char *symbol))(void) {
    (void)self;
    return base()->xDlSym(base(), library, symbol);
}
static void bufferedDlClose(sqlite3_vfs *self, void *library) {
    (void)self;
    base()->xDlClose(base(), library);
}
static int bufferedRandomness(sqlite3_vfs *self, int size, char *out) {
    (void)self;
    return base()->xRandomness(base(), size, out);
}
static int bufferedSleep(sqlite3_vfs *self, int micros) {
    (void)self;
    return base()->xSleep(base(), micros);
}
static int bufferedCurrentTime(sqlite3_vfs *self, double *out) {
    (void)self;
    return base()->xCurrentTime(base(), out);
}
static int bufferedGetLastError(sqlite3_vfs *self, int size, char *out) {
    (void)self;
    return base()->xGetLastError(base(), size, out);
}
static int bufferedCurrentTimeInt64(sqlite3_vfs *self, sqlite3_int64 *out) {
    (void)self;
    return base()->xCurrentTimeInt64(base(), out);
}

static pthread_once_t registered = PTHREAD_ONCE_INIT;

static void registerVFS(void) {
    sqlite3_vfs *real = sqlite3_vfs_find(NULL);
    if (!real || real->iVersion < 2) return;
    vfs.iVersion = 2;
    vfs.szOsFile = (int)sizeof(BufferedFile) + real->szOsFile;
    vfs.mxPathname = real->mxPathname;
    vfs.zName = "synclab-wal-buffer";
    vfs.pAppData = real;
    vfs.xOpen = bufferedOpen;
    vfs.xDelete = bufferedDelete;
    vfs.xAccess = bufferedAccess;
    vfs.xFullPathname = bufferedFullPathname;
    vfs.xDlOpen = bufferedDlOpen;
    vfs.xDlError = bufferedDlError;
    vfs.xDlSym = bufferedDlSym;
    vfs.xDlClose = bufferedDlClose;
    vfs.xRandomness = bufferedRandomness;
    vfs.xSleep = bufferedSleep;
    vfs.xCurrentTime = bufferedCurrentTime;
    vfs.xGetLastError = bufferedGetLastError;
    vfs.xCurrentTimeInt64 = bufferedCurrentTimeInt64;
    sqlite3_vfs_register(&vfs, 0);
}

const char *synclab_wal_buffer_vfs(void) {
    pthread_once(&registered, registerVFS);
    return vfs.zName;
}

// SQLite's automatic checkpoint (sqlite3WalDefaultHook): at this many frames in the WAL after a commit.
#define CHECKPOINT_FRAMES 1000

// The WAL file of `db`'s schema `schema` when it is one of ours, else NULL.
static BufferedFile *walOf(sqlite3 *db, const char *schema) {
    sqlite3_file *wal = NULL;
    if (sqlite3_file_control(db, schema, SQLITE_FCNTL_JOURNAL_POINTER, &wal) != SQLITE_OK || !wal) return NULL;
    return wal->pMethods == &bufferedMethods ? (BufferedFile *)wal : NULL;
}

int synclab_wal_buffer_counts(sqlite3 *db, long long *writes, long long *flushes) {
    BufferedFile *wal = walOf(db, "main");
    if (!wal) return 0;
    *writes = wal->writes;
    *flushes = wal->flushes;
    return 1;
}

static int committed(void *unused, sqlite3 *db, const char *schema, int frames) {
    (void)unused;
    BufferedFile *wal = walOf(db, schema);
    if (wal) {
        int rc = flush(wal);
        if (rc != SQLITE_OK) return rc;
    }
    if (frames >= CHECKPOINT_FRAMES) sqlite3_wal_checkpoint(db, schema);
    return SQLITE_OK;
}

int synclab_wal_buffer_attach(sqlite3 *db) {
    sqlite3_wal_hook(db, committed, NULL);
    return SQLITE_OK;
}
