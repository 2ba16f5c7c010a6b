/* sqlive's VFS: reading a rollback-journal database without ever holding a
 * lock on it, so that no writer's commit fails or waits because of sqlive.
 *
 * Two VFSes over the system's default one (unix), both registered by
 * `sqlive_observer_vfs_register`:
 *
 * - "sqlive-observer": a main database opened read-only through it is read
 *   lock-free. SQLite's SHARED lock is only pretended; each read transaction
 *   reads from a *generation*: a snapshot of the file that is proven whole.
 *   A generation starts when no writer holds PENDING or EXCLUSIVE (in any
 *   process: fcntl F_GETLK; in this one: the count kept by "sqlive"), and is
 *   the file as it was at that moment: every page read from the file is
 *   checked afterwards against the file's status change time (ctime), size
 *   and inode, and any write to the file after the generation began changes
 *   the ctime (see `ctime_proves`); a page read after such a write fails the
 *   read with SQLITE_IOERR_READ and counts as torn, and sqlive reads again
 *   in a new generation. The pages read in a generation are kept (up to
 *   `observer_budget` bytes) and served again while the file has not
 *   changed; a new generation first reads the previous one's pages in a few
 *   large reads (prefetch), so that a long query's own reading is not spread
 *   over its whole run. A database whose header says WAL is read with
 *   SQLite's real locks (WAL readers never block writers).
 * - "sqlive": everything passes through; a main database opened read-write
 *   through it counts its connections at PENDING or above, per inode, so
 *   that an observer in the same process (whose fcntl locks F_GETLK cannot
 *   see) does not begin while the session is writing pages.
 *
 * The argument that a torn result can never be delivered is written out in
 * docs/architecture.md ("Watching without a lock"). */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include "CSQLiveSupport.h"

/* SQLite's lock bytes (os_unix.c), at the default pending byte. */
#define OBS_PENDING_BYTE 0x40000000
#define OBS_SHARED_FIRST (OBS_PENDING_BYTE + 2)
#define OBS_SHARED_SIZE 510

enum { KIND_PASS = 0, KIND_TRACKED = 1, KIND_OBSERVER = 2 };
/* How a write after a reading of the ctime is known to change it. */
enum { CTIME_MULTIGRAIN = 0, CTIME_TICK = 1, CTIME_COARSE = 2 };

/* In-process connections at PENDING or above, per file. Guarded by inodes_lock. */
typedef struct Inode {
    dev_t dev;
    ino_t ino;
    int writers;
    struct Inode *next;
} Inode;
static pthread_mutex_t inodes_lock = PTHREAD_MUTEX_INITIALIZER;
static Inode *inodes;

typedef struct Block {
    struct Block *next;
} Block; /* followed by its pages */

typedef struct {
    sqlite3_file base;
    sqlite3_file *real;
    int kind;
    int fd;
    dev_t dev;
    ino_t ino;
    int ctimeRule;
    int lock;     /* the level SQLite believes it holds (observer) */
    int realLock; /* observer: a real SHARED lock is held (a WAL generation) */
    int lastWasWal; /* observer: the last read transaction was a WAL one */
    int counted;  /* tracked: counted in `inodes` */
    /* observer: a Litestream follow target (`FILE-txid` beside it): read as
       a rollback file whatever its header says, with a change counter that
       changes with the file (see `patch_header`). */
    int follower;
    /* The generation. */
    int generation; /* 1 while the pages kept are the file's */
    int torn;       /* the current transaction read a page of another generation */
    int overtaken;  /* a transaction of this generation was */
    struct timespec ctime;
    off_t size;
    unsigned pageSize;
    unsigned pageCount;
    unsigned char **slots;
    unsigned char *touched, *previous; /* bitmaps of pages read: this generation, the last */
    unsigned touchedBits, previousBits;
    int passingBy; /* pages read are neither kept nor read ahead (SQLIVE_PAGES_PASS_BY) */
    Block *blocks;
    size_t stored;
    size_t budget; /* the most bytes of pages kept */
    /* Which pages changed: generations are numbered; `changedAt[i]` is the
       number of the generation in which page i+1 was last found different
       from the previous generation's copy, or not known to be the same (no
       copy in one of them). The schema cookie's change is kept apart. */
    unsigned number;
    unsigned *changedAt;
    unsigned changedCount;
    unsigned schemaChangedAt;
    /* The pages read while recording (one statement's), without repeats. */
    int recording;
    unsigned *recorded;
    unsigned recordedCount, recordedCapacity;
    unsigned char *recordedBits;
    unsigned recordedBitsCount;
    sqlive_observer_stats stats;
} ObsFile;

static sqlite3_vfs *base_vfs;
static sqlite3_vfs observer_vfs, tracking_vfs;
static pthread_once_t register_once = PTHREAD_ONCE_INIT;
static int register_result = SQLITE_ERROR;
static size_t observer_budget = 64u << 20;
static int observer_enabled = 1;
static int kernel_multigrain = -1;

/* ---- in-process writers ------------------------------------------------ */

static void count_writer(ObsFile *f, int delta) {
    pthread_mutex_lock(&inodes_lock);
    Inode **link = &inodes;
    while (*link && !((*link)->dev == f->dev && (*link)->ino == f->ino)) link = &(*link)->next;
    if (*link == NULL && delta > 0) {
        Inode *entry = calloc(1, sizeof(Inode));
        if (entry) {
            entry->dev = f->dev;
            entry->ino = f->ino;
            *link = entry;
        }
    }
    if (*link) {
        (*link)->writers += delta;
        if ((*link)->writers <= 0) {
            Inode *gone = *link;
            *link = gone->next;
            free(gone);
        }
    }
    pthread_mutex_unlock(&inodes_lock);
}

static int in_process_writers(ObsFile *f) {
    int writers = 0;
    pthread_mutex_lock(&inodes_lock);
    for (Inode *entry = inodes; entry; entry = entry->next) {
        if (entry->dev == f->dev && entry->ino == f->ino) writers = entry->writers;
    }
    pthread_mutex_unlock(&inodes_lock);
    return writers;
}

/* Whether a write lock is held on [start, start+length) by another process. */
static int write_locked(int fd, off_t start, off_t length) {
    struct flock probe = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = start, .l_len = length};
    if (fcntl(fd, F_GETLK, &probe) != 0) return 1; /* unknown: assume a writer */
    return probe.l_type != F_UNLCK;
}

/* A writer holds PENDING or EXCLUSIVE: it may be writing pages of the file. */
static int writer_active(ObsFile *f) {
    return in_process_writers(f) > 0 || write_locked(f->fd, OBS_PENDING_BYTE, 1) ||
           write_locked(f->fd, OBS_SHARED_FIRST, OBS_SHARED_SIZE);
}

/* ---- what a ctime proves ---------------------------------------------------
 * Linux sets a file's ctime (and mtime) at every write, before the written
 * bytes can be read. Whether a write *after* a reading of the ctime always
 * changes it depends on the clock the file system stamps with:
 * - multigrain (Linux 6.13 and later on ext4, xfs, btrfs, tmpfs): once the
 *   ctime was read, the next change gets a fine-grained stamp, later than it;
 * - a coarse clock tick (older kernels, other fine-grained file systems): a
 *   write gets the tick it happens in, so the stamp read is only proven old
 *   when it is earlier than the tick read *before* it;
 * - anything else: stamps may be as coarse as 2 s (FAT), so the same with
 *   two seconds to spare. */

static int kernel_has_multigrain(void) {
    if (kernel_multigrain >= 0) return kernel_multigrain;
    struct utsname name;
    int major = 0, minor = 0;
    int result = 0;
    if (uname(&name) == 0 && sscanf(name.release, "%d.%d", &major, &minor) == 2) {
        result = major > 6 || (major == 6 && minor >= 13);
    }
    const char *forced = getenv("SQLIVE_OBSERVER_CTIME");
    if (forced && strcmp(forced, "tick") == 0) result = 0;
    kernel_multigrain = result;
    return result;
}

static int ctime_rule_of(int fd) {
    struct statfs fs;
    if (fstatfs(fd, &fs) != 0) return CTIME_COARSE;
    switch ((unsigned long)fs.f_type) {
    case 0xEF53UL:     /* ext2/3/4 */
    case 0x58465342UL: /* xfs */
    case 0x9123683EUL: /* btrfs */
    case 0x01021994UL: /* tmpfs */
        return kernel_has_multigrain() ? CTIME_MULTIGRAIN : CTIME_TICK;
    case 0x794C7630UL: /* overlayfs */
    case 0xF2F52010UL: /* f2fs */
    case 0x2FC12FC1UL: /* zfs */
        return CTIME_TICK;
    default:
        /* Network and FUSE file systems may serve cached attributes and
           pages: no proof holds there; such files keep SQLite's locks. */
        return -1;
    }
}

static long long nanoseconds(struct timespec t) { return (long long)t.tv_sec * 1000000000LL + t.tv_nsec; }

/* Whether any write after `tick` (the coarse clock read before the file's
 * status) is bound to change a ctime of `ctime`. */
static int ctime_proves(int rule, struct timespec ctime, struct timespec tick) {
    switch (rule) {
    case CTIME_MULTIGRAIN: return 1;
    case CTIME_TICK: return nanoseconds(ctime) < nanoseconds(tick);
    default: return nanoseconds(ctime) + 2000000000LL <= nanoseconds(tick);
    }
}

static int same_file_state(ObsFile *f, const struct stat *st) {
    return st->st_ino == f->ino && st->st_dev == f->dev && st->st_size == f->size &&
           st->st_ctim.tv_sec == f->ctime.tv_sec && st->st_ctim.tv_nsec == f->ctime.tv_nsec;
}

/* ---- the generation's pages ---------------------------------------------- */

static void drop_pages(ObsFile *f) {
    while (f->blocks) {
        Block *next = f->blocks->next;
        free(f->blocks);
        f->blocks = next;
    }
    free(f->slots);
    f->slots = NULL;
    f->stored = 0;
    f->pageCount = 0;
    f->generation = 0;
}

static int bit(const unsigned char *map, unsigned bits, unsigned index) {
    return map && index < bits && (map[index >> 3] & (1u << (index & 7)));
}

static void set_bit(unsigned char *map, unsigned bits, unsigned index) {
    if (map && index < bits) map[index >> 3] |= (unsigned char)(1u << (index & 7));
}

/* Reads pages [first, first+count) into a new block and keeps them. */
static int keep_run(ObsFile *f, unsigned first, unsigned count) {
    size_t length = (size_t)count * f->pageSize;
    if (f->stored + length > f->budget) return 0;
    Block *block = malloc(sizeof(Block) + length);
    if (block == NULL) return 0;
    unsigned char *data = (unsigned char *)(block + 1);
    ssize_t got = pread(f->fd, data, length, (off_t)first * f->pageSize);
    if (got < (ssize_t)f->pageSize) {
        free(block);
        return got < 0 ? -1 : 0;
    }
    block->next = f->blocks;
    f->blocks = block;
    unsigned whole = (unsigned)(got / f->pageSize);
    for (unsigned i = 0; i < whole; i++) f->slots[first + i] = data + (size_t)i * f->pageSize;
    f->stored += length;
    f->stats.prefetched += whole;
    return 0;
}

/* Page 1 without what every commit rewrites: the change counter, the
 * database size, the freelist's first trunk and count (bytes 24-39), and
 * the version-valid-for number and SQLite version (92-99). */
static int same_first_page(const unsigned char *a, const unsigned char *b, unsigned size) {
    return memcmp(a, b, 24) == 0 && memcmp(a + 40, b + 40, 52) == 0 && memcmp(a + 100, b + 100, size - 100) == 0;
}

/* Notes, for each page, whether the new generation's copy equals the old
 * one's; a page without both copies counts as changed. */
static void compare_generations(ObsFile *f, unsigned char **oldSlots, unsigned oldCount, unsigned oldSize) {
    unsigned *changedAt = calloc(f->pageCount ? f->pageCount : 1, sizeof(unsigned));
    if (changedAt == NULL) {
        free(f->changedAt);
        f->changedAt = NULL;
        f->changedCount = 0;
        f->schemaChangedAt = f->number;
        return;
    }
    int comparable = oldSlots && oldSize == f->pageSize && f->pageSize > 0;
    for (unsigned i = 0; i < f->pageCount; i++) {
        unsigned char *now = f->slots ? f->slots[i] : NULL;
        unsigned char *before = comparable && i < oldCount ? oldSlots[i] : NULL;
        int same = now && before &&
                   (i == 0 ? same_first_page(now, before, f->pageSize) : memcmp(now, before, f->pageSize) == 0);
        changedAt[i] = same && f->changedAt && i < f->changedCount ? f->changedAt[i] : f->number;
    }
    unsigned char *first = f->slots ? f->slots[0] : NULL;
    unsigned char *firstBefore = comparable && oldCount > 0 ? oldSlots[0] : NULL;
    if (!first || !firstBefore || memcmp(first + 40, firstBefore + 40, 4) != 0) f->schemaChangedAt = f->number;
    free(f->changedAt);
    f->changedAt = changedAt;
    f->changedCount = f->pageCount;
}

static void record_page(ObsFile *f, unsigned page) {
    if (!f->recording) return;
    if (page < f->recordedBitsCount && (f->recordedBits[page >> 3] & (1u << (page & 7)))) return;
    if (f->recordedCount == f->recordedCapacity) {
        unsigned capacity = f->recordedCapacity ? f->recordedCapacity * 2 : 64;
        unsigned *grown = realloc(f->recorded, capacity * sizeof(unsigned));
        if (grown == NULL) {
            f->recording = 0; /* incomplete: the recording is dropped */
            f->recordedCount = 0;
            return;
        }
        f->recorded = grown;
        f->recordedCapacity = capacity;
    }
    f->recorded[f->recordedCount++] = page;
    if (page < f->recordedBitsCount) f->recordedBits[page >> 3] |= (unsigned char)(1u << (page & 7));
}

/* Starts a generation at the file's current state `st` (checked by the
 * caller), reading page 1 and the pages the last generation read. */
static void start_generation(ObsFile *f, const struct stat *st, unsigned oldPageCount) {
    /* The pages read in the generation that ends are the next prefetch;
       when a writer overtook one of its reads, what it would have read next
       is unknown, so the pages read ahead for it stay in the set. A
       generation that never began (restarted) read nothing: the set stays. */
    int readAny = 0;
    for (unsigned i = 0; f->touched && i < (f->touchedBits + 7) / 8 && !readAny; i++) readAny = f->touched[i] != 0;
    if (readAny) {
        if (f->overtaken && f->previous) {
            unsigned common = f->previousBits < f->touchedBits ? f->previousBits : f->touchedBits;
            for (unsigned i = 0; i < (common + 7) / 8; i++) f->touched[i] |= f->previous[i];
        }
        free(f->previous);
        f->previous = f->touched;
        f->previousBits = f->touchedBits;
        f->touched = NULL;
        f->touchedBits = 0;
    }
    f->overtaken = 0;
    free(f->touched);
    f->touched = NULL;
    f->touchedBits = 0;
    /* The last generation's copies, compared with the new ones below. */
    unsigned char **oldSlots = f->generation ? f->slots : NULL;
    Block *oldBlocks = f->generation ? f->blocks : NULL;
    unsigned oldCount = f->generation ? f->pageCount : 0, oldSize = f->pageSize;
    if (f->generation) f->slots = NULL, f->blocks = NULL;
    drop_pages(f);
    f->number++;
    f->ctime = st->st_ctim;
    f->size = st->st_size;
    f->pageSize = 0;
    f->stats.generations++;
    unsigned char header[100];
    if (st->st_size >= 100 && pread(f->fd, header, sizeof header, 0) == (ssize_t)sizeof header) {
        unsigned size = ((unsigned)header[16] << 8) | header[17];
        if (size == 1) size = 65536;
        if (size >= 512 && size <= 65536 && (size & (size - 1)) == 0) f->pageSize = size;
    }
    if (f->pageSize) {
        off_t pages = (st->st_size + f->pageSize - 1) / f->pageSize;
        if (pages > 0 && pages <= (1 << 24)) {
            f->pageCount = (unsigned)pages;
            f->slots = calloc(f->pageCount, sizeof(unsigned char *));
            f->touchedBits = f->pageCount;
            f->touched = calloc((f->touchedBits + 7) / 8, 1);
            if (f->slots == NULL || f->touched == NULL) {
                free(f->slots), free(f->touched);
                f->slots = NULL, f->touched = NULL;
                f->pageCount = 0, f->touchedBits = 0;
            }
        }
    }
    if (f->slots) {
        keep_run(f, 0, 1);
        unsigned run = 0, first = 0;
        for (unsigned page = 1; page <= f->pageCount; page++) {
            /* Pages past the old end are new (appended rows' pages): they
               are read too, since a scan reaches them last. */
            int wanted = page < f->pageCount &&
                         (bit(f->previous, f->previousBits, page) || (oldPageCount && page >= oldPageCount));
            if (wanted) {
                if (run == 0) first = page;
                run++;
            }
            if ((!wanted && run) || run == 64) {
                keep_run(f, first, run);
                run = 0;
            }
        }
    }
    compare_generations(f, oldSlots, oldCount, oldSize);
    while (oldBlocks) {
        Block *next = oldBlocks->next;
        free(oldBlocks);
        oldBlocks = next;
    }
    free(oldSlots);
    f->generation = 1;
}

/* A Litestream follow target: `PATH-txid` holds the last applied
 * transaction's id, 16 lowercase hexadecimal digits and a newline. Litestream
 * writes pages into the file under its own fcntl locks (PENDING, then the
 * SHARED range), waiting for them with no timeout: any reader that holds
 * SHARED for long stalls it, and SQLite holds SHARED for as long as a
 * connection is open on a file whose header says WAL. It leaves the header
 * alone unless page 1 is in a batch, so the header may say WAL, and the
 * change counter does not count its batches. */
int sqlive_is_follow_target(const char *path) {
    if (path == NULL) return 0;
    size_t length = strlen(path);
    char *name = malloc(length + 6);
    if (name == NULL) return 0;
    memcpy(name, path, length);
    memcpy(name + length, "-txid", 6);
    FILE *file = fopen(name, "r");
    free(name);
    if (file == NULL) return 0;
    char text[40];
    size_t read = fread(text, 1, sizeof text, file);
    fclose(file);
    if (read < 16) return 0;
    for (int i = 0; i < 16; i++) {
        char c = text[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return 0;
    }
    return read == 16 || (read == 17 && text[16] == '\n');
}

/* What a follow target's header says to SQLite: a rollback file (bytes 18
 * and 19: 1), whose change counter (24) and version-valid-for number (92)
 * change whenever the file does: a stamp of its status (ctime, size,
 * inode), the same in every connection, so that SQLite drops its page
 * cache at each batch Litestream applies. */
static void patch_header(ObsFile *f, int inTransaction, void *buffer, int amount, sqlite3_int64 offset) {
    /* In a read transaction: the generation's status; outside one (the
       probe's look at the header): the file's, now. */
    struct timespec ctime = f->ctime;
    unsigned long long size = (unsigned long long)f->size;
    struct stat st;
    if (!inTransaction && f->fd >= 0 && fstat(f->fd, &st) == 0) {
        ctime = st.st_ctim;
        size = (unsigned long long)st.st_size;
    }
    unsigned long long h = 1469598103934665603ULL;
    unsigned long long parts[4] = {(unsigned long long)ctime.tv_sec, (unsigned long long)ctime.tv_nsec, size,
                                   (unsigned long long)f->ino};
    for (int i = 0; i < 4; i++) {
        h ^= parts[i];
        h *= 1099511628211ULL;
    }
    unsigned stamp = (unsigned)(h ^ (h >> 32));
    unsigned char header[100];
    memset(header, 0, sizeof header);
    header[18] = 1;
    header[19] = 1;
    for (int i = 0; i < 4; i++) {
        header[24 + i] = (unsigned char)(stamp >> (24 - 8 * i));
        header[92 + i] = (unsigned char)(stamp >> (24 - 8 * i));
    }
    static const int fields[][2] = {{18, 2}, {24, 4}, {92, 4}};
    for (int k = 0; k < 3; k++) {
        for (int i = fields[k][0]; i < fields[k][0] + fields[k][1]; i++) {
            if (i >= offset && i < offset + amount) ((unsigned char *)buffer)[i - offset] = header[i];
        }
    }
}

/* Begins a read transaction: SQLite's SHARED lock, pretended. */
static int observer_begin(ObsFile *f) {
    f->torn = 0;
    /* Pages past this count, at the next generation, are new. */
    unsigned pageCountBefore = f->pageCount;
    for (int attempt = 0; attempt < 400; attempt++) {
        /* In this order: the clock, the file's status, then the locks. A
           write after the status was read changes the ctime (see
           ctime_proves); a write before it by a writer still at EXCLUSIVE
           is refused here; a write before it by a writer that let go
           belongs to a finished transaction. (Asking for the locks first
           left a hole: a spill between the two became the generation.) */
        struct timespec tick;
        clock_gettime(CLOCK_REALTIME_COARSE, &tick);
        struct stat st;
        if (fstat(f->fd, &st) != 0) return SQLITE_IOERR_LOCK;
        if (writer_active(f)) {
            /* Yield to the writer: look again every 100 µs for 2 ms, then
               let SQLite's busy handler wait (and give up at its timeout). */
            f->stats.writerWaits++;
            struct timespec pause = {0, 100000};
            int waited = 0;
            while (waited++ < 20 && writer_active(f)) nanosleep(&pause, NULL);
            if (waited > 20) return SQLITE_BUSY;
            continue;
        }
        unsigned char mode[2] = {0, 0};
        if (!f->follower && st.st_size >= 100 && pread(f->fd, mode, 2, 18) == 2 && mode[0] == 2 && mode[1] == 2) {
            /* WAL: readers never block writers; read with SQLite's locks. */
            drop_pages(f);
            int rc = f->real->pMethods->xLock(f->real, SQLITE_LOCK_SHARED);
            if (rc == SQLITE_OK) {
                f->realLock = 1;
                f->lastWasWal = 1;
                f->stats.walGenerations++;
            }
            return rc;
        }
        f->lastWasWal = 0;
        if (f->generation && same_file_state(f, &st)) {
            f->stats.reuses++;
            return SQLITE_OK;
        }
        /* A ctime in whole seconds (ext4 with small inodes, say) is stamped
           by the second: the coarse rule, whatever the file system. */
        int rule = st.st_ctim.tv_nsec == 0 ? CTIME_COARSE : f->ctimeRule;
        if (!ctime_proves(rule, st.st_ctim, tick)) {
            /* Written in this clock tick: a write later in it could keep
               the same stamp. Wait for the next tick. */
            f->stats.tickWaits++;
            struct timespec pause = {0, 250000};
            nanosleep(&pause, NULL);
            continue;
        }
        start_generation(f, &st, pageCountBefore);
        struct stat after;
        if (fstat(f->fd, &after) == 0 && same_file_state(f, &after)) return SQLITE_OK;
        f->stats.restarts++;
        drop_pages(f);
    }
    return SQLITE_BUSY;
}

/* ---- io methods ---------------------------------------------------------- */

static int obs_close(sqlite3_file *file) {
    ObsFile *f = (ObsFile *)file;
    if (f->kind == KIND_OBSERVER && getenv("SQLIVE_OBSERVER_STATS")) {
        /* A diagnostic for measurements (docs/benchmarks.md). */
        sqlive_observer_stats *s = &f->stats;
        fprintf(stderr,
                "sqlive observer: generations %lld reuses %lld prefetched %lld hits %lld misses %lld torn %lld "
                "writerWaits %lld tickWaits %lld wal %lld restarts %lld\n",
                s->generations, s->reuses, s->prefetched, s->hits, s->misses, s->torn, s->writerWaits, s->tickWaits,
                s->walGenerations, s->restarts);
    }
    if (f->counted) count_writer(f, -1);
    drop_pages(f);
    free(f->touched);
    free(f->previous);
    free(f->changedAt);
    free(f->recorded);
    free(f->recordedBits);
    return f->real->pMethods->xClose(f->real);
}

static int observing(ObsFile *f) { return f->kind == KIND_OBSERVER && f->lock >= SQLITE_LOCK_SHARED && !f->realLock; }

static int obs_read_pages(ObsFile *f, void *buffer, int amount, sqlite3_int64 offset);

static int obs_read(sqlite3_file *file, void *buffer, int amount, sqlite3_int64 offset) {
    ObsFile *f = (ObsFile *)file;
    int inTransaction = observing(f);
    int rc = obs_read_pages(f, buffer, amount, offset);
    if (f->follower && offset < 100 && (rc == SQLITE_OK || rc == SQLITE_IOERR_SHORT_READ)) {
        patch_header(f, inTransaction, buffer, amount, offset);
    }
    return rc;
}

static int obs_read_pages(ObsFile *f, void *buffer, int amount, sqlite3_int64 offset) {
    if (!observing(f)) return f->real->pMethods->xRead(f->real, buffer, amount, offset);
    if (f->torn || !f->generation) return SQLITE_IOERR_READ;
    unsigned page = 0;
    int whole = f->pageSize && amount == (int)f->pageSize && offset % f->pageSize == 0;
    if (whole) {
        page = (unsigned)(offset / f->pageSize);
        if (!f->passingBy) set_bit(f->touched, f->touchedBits, page);
        record_page(f, page);
        if (page < f->pageCount && f->slots[page]) {
            memcpy(buffer, f->slots[page], (size_t)amount);
            f->stats.hits++;
            return SQLITE_OK;
        }
    } else if (f->recording && f->pageSize && offset >= 0 && offset < (sqlite3_int64)f->pageSize) {
        record_page(f, 0);
    }
    if (!whole && f->slots && f->slots[0] && offset >= 0 && offset + amount <= (sqlite3_int64)f->pageSize) {
        memcpy(buffer, f->slots[0] + offset, (size_t)amount);
        return SQLITE_OK;
    }
    f->stats.misses++;
    int rc = f->real->pMethods->xRead(f->real, buffer, amount, offset);
    if (rc != SQLITE_OK && rc != SQLITE_IOERR_SHORT_READ) return rc;
    struct stat st;
    if (fstat(f->fd, &st) != 0 || !same_file_state(f, &st)) {
        /* Written since the generation began: what was read may belong to
           another one. Never hand it over. */
        f->torn = 1;
        f->overtaken = 1;
        f->generation = 0;
        f->stats.torn++;
        return SQLITE_IOERR_READ;
    }
    if (rc == SQLITE_OK && whole && !f->passingBy && page < f->pageCount && f->stored + f->pageSize <= f->budget) {
        Block *block = malloc(sizeof(Block) + f->pageSize);
        if (block) {
            block->next = f->blocks;
            f->blocks = block;
            f->slots[page] = (unsigned char *)(block + 1);
            memcpy(f->slots[page], buffer, f->pageSize);
            f->stored += f->pageSize;
        }
    }
    return rc;
}

static int obs_write(sqlite3_file *file, const void *buffer, int amount, sqlite3_int64 offset) {
    ObsFile *f = (ObsFile *)file;
    return f->real->pMethods->xWrite(f->real, buffer, amount, offset);
}

static int obs_truncate(sqlite3_file *file, sqlite3_int64 size) {
    ObsFile *f = (ObsFile *)file;
    return f->real->pMethods->xTruncate(f->real, size);
}

static int obs_sync(sqlite3_file *file, int flags) {
    ObsFile *f = (ObsFile *)file;
    return f->real->pMethods->xSync(f->real, flags);
}

static int obs_file_size(sqlite3_file *file, sqlite3_int64 *size) {
    ObsFile *f = (ObsFile *)file;
    if (observing(f) && f->generation) {
        *size = f->size;
        return SQLITE_OK;
    }
    return f->real->pMethods->xFileSize(f->real, size);
}

static int obs_lock(sqlite3_file *file, int level) {
    ObsFile *f = (ObsFile *)file;
    if (f->kind == KIND_OBSERVER) {
        if (f->realLock) return f->real->pMethods->xLock(f->real, level);
        if (level == SQLITE_LOCK_SHARED && f->lock == SQLITE_LOCK_NONE) {
            int rc = observer_begin(f);
            if (rc == SQLITE_OK) f->lock = SQLITE_LOCK_SHARED;
            return rc;
        }
        if (level <= f->lock) return SQLITE_OK;
        return SQLITE_READONLY; /* an observer never writes */
    }
    int rc = f->real->pMethods->xLock(f->real, level);
    if (f->kind == KIND_TRACKED && level >= SQLITE_LOCK_PENDING && !f->counted) {
        /* Counted even when EXCLUSIVE failed: SQLite then keeps PENDING. */
        f->counted = 1;
        count_writer(f, +1);
    }
    return rc;
}

static int obs_unlock(sqlite3_file *file, int level) {
    ObsFile *f = (ObsFile *)file;
    if (f->kind == KIND_OBSERVER) {
        int rc = SQLITE_OK;
        if (f->realLock) {
            rc = f->real->pMethods->xUnlock(f->real, level);
            if (level == SQLITE_LOCK_NONE) f->realLock = 0;
        }
        if (level < f->lock) f->lock = level;
        return rc;
    }
    int rc = f->real->pMethods->xUnlock(f->real, level);
    if (f->kind == KIND_TRACKED && level <= SQLITE_LOCK_SHARED && f->counted) {
        f->counted = 0;
        count_writer(f, -1);
    }
    return rc;
}

static int obs_check_reserved(sqlite3_file *file, int *out) {
    ObsFile *f = (ObsFile *)file;
    return f->real->pMethods->xCheckReservedLock(f->real, out);
}

/* Recording and comparing pages (sqlive_observer_pages_request). */
static int observer_pages(ObsFile *f, sqlive_observer_pages_request *request) {
    int usable = f->kind == KIND_OBSERVER && !f->realLock && f->generation && !f->torn;
    switch (request->op) {
    case SQLIVE_PAGES_LAST_WAS_WAL:
        return f->kind == KIND_OBSERVER && f->lastWasWal ? SQLITE_OK : SQLITE_NOTFOUND;
    case SQLIVE_PAGES_PASS_BY:
    case SQLIVE_PAGES_KEEP:
        if (f->kind != KIND_OBSERVER) return SQLITE_NOTFOUND;
        f->passingBy = request->op == SQLIVE_PAGES_PASS_BY;
        return SQLITE_OK;
    case SQLIVE_PAGES_FORGET:
        if (f->kind != KIND_OBSERVER) return SQLITE_NOTFOUND;
        if (f->lock >= SQLITE_LOCK_SHARED) return SQLITE_MISUSE;
        drop_pages(f);
        free(f->previous), free(f->touched);
        f->previous = NULL, f->touched = NULL;
        f->previousBits = 0, f->touchedBits = 0;
        f->overtaken = 0;
        return SQLITE_OK;
    case SQLIVE_PAGES_RECORD:
        f->recording = 0;
        f->recordedCount = 0;
        if (!usable || f->lock < SQLITE_LOCK_SHARED) return SQLITE_NOTFOUND;
        if (f->recordedBitsCount < f->pageCount) {
            free(f->recordedBits);
            f->recordedBits = calloc((f->pageCount + 7) / 8, 1);
            f->recordedBitsCount = f->recordedBits ? f->pageCount : 0;
        } else if (f->recordedBits) {
            memset(f->recordedBits, 0, (f->recordedBitsCount + 7) / 8);
        }
        f->recording = 1;
        request->generation = f->number;
        return SQLITE_OK;
    case SQLIVE_PAGES_RECORDED: {
        int complete = f->recording && usable;
        f->recording = 0;
        if (!complete) return SQLITE_NOTFOUND;
        request->pages = f->recorded;
        request->count = f->recordedCount;
        request->generation = f->number;
        return SQLITE_OK;
    }
    case SQLIVE_PAGES_UNCHANGED: {
        request->unchanged = 0;
        request->generation = f->number;
        if (!usable || f->lock < SQLITE_LOCK_SHARED || request->generationBefore == 0) return SQLITE_OK;
        if (f->schemaChangedAt > request->generationBefore || f->changedAt == NULL) return SQLITE_OK;
        if (f->changedCount == 0 || f->changedAt[0] > request->generationBefore) return SQLITE_OK;
        for (unsigned i = 0; i < request->count; i++) {
            unsigned page = request->pages[i];
            if (page >= f->changedCount || f->changedAt[page] > request->generationBefore) return SQLITE_OK;
        }
        /* Unchanged: its pages are read ahead and compared next time too. */
        for (unsigned i = 0; i < request->count; i++) set_bit(f->touched, f->touchedBits, request->pages[i]);
        request->unchanged = 1;
        return SQLITE_OK;
    }
    }
    return SQLITE_NOTFOUND;
}

static int obs_file_control(sqlite3_file *file, int op, void *argument) {
    ObsFile *f = (ObsFile *)file;
    if (op == SQLIVE_FCNTL_OBSERVER_PAGES) {
        return observer_pages(f, argument);
    }
    if (op == SQLIVE_FCNTL_OBSERVER_STATS) {
        sqlive_observer_stats *stats = argument;
        *stats = f->stats;
        stats->observing = f->kind == KIND_OBSERVER;
        stats->bytesKept = (long long)f->stored;
        return SQLITE_OK;
    }
    return f->real->pMethods->xFileControl(f->real, op, argument);
}

static int obs_sector_size(sqlite3_file *file) {
    ObsFile *f = (ObsFile *)file;
    return f->real->pMethods->xSectorSize(f->real);
}

static int obs_device_characteristics(sqlite3_file *file) {
    ObsFile *f = (ObsFile *)file;
    return f->real->pMethods->xDeviceCharacteristics(f->real);
}

static int obs_shm_map(sqlite3_file *file, int region, int size, int extend, void volatile **out) {
    ObsFile *f = (ObsFile *)file;
    return f->real->pMethods->xShmMap(f->real, region, size, extend, out);
}

static int obs_shm_lock(sqlite3_file *file, int offset, int count, int flags) {
    ObsFile *f = (ObsFile *)file;
    return f->real->pMethods->xShmLock(f->real, offset, count, flags);
}

static void obs_shm_barrier(sqlite3_file *file) {
    ObsFile *f = (ObsFile *)file;
    f->real->pMethods->xShmBarrier(f->real);
}

static int obs_shm_unmap(sqlite3_file *file, int delete) {
    ObsFile *f = (ObsFile *)file;
    return f->real->pMethods->xShmUnmap(f->real, delete);
}

static int obs_fetch(sqlite3_file *file, sqlite3_int64 offset, int amount, void **out) {
    ObsFile *f = (ObsFile *)file;
    if (f->kind == KIND_OBSERVER && !f->realLock) {
        *out = NULL; /* read through obs_read, never through a mapping */
        return SQLITE_OK;
    }
    return f->real->pMethods->xFetch(f->real, offset, amount, out);
}

static int obs_unfetch(sqlite3_file *file, sqlite3_int64 offset, void *pointer) {
    ObsFile *f = (ObsFile *)file;
    if (f->kind == KIND_OBSERVER && !f->realLock && pointer == NULL) return SQLITE_OK;
    return f->real->pMethods->xUnfetch(f->real, offset, pointer);
}

static const sqlite3_io_methods observer_methods = {
    .iVersion = 3,
    .xClose = obs_close,
    .xRead = obs_read,
    .xWrite = obs_write,
    .xTruncate = obs_truncate,
    .xSync = obs_sync,
    .xFileSize = obs_file_size,
    .xLock = obs_lock,
    .xUnlock = obs_unlock,
    .xCheckReservedLock = obs_check_reserved,
    .xFileControl = obs_file_control,
    .xSectorSize = obs_sector_size,
    .xDeviceCharacteristics = obs_device_characteristics,
    .xShmMap = obs_shm_map,
    .xShmLock = obs_shm_lock,
    .xShmBarrier = obs_shm_barrier,
    .xShmUnmap = obs_shm_unmap,
    .xFetch = obs_fetch,
    .xUnfetch = obs_unfetch,
};

/* The descriptor the unix VFS opened: `unixFile` starts with its methods,
 * its VFS, its inode and the descriptor. Used only when `fstat` of it and
 * `stat` of the name agree. */
static int descriptor_of(sqlite3_file *real, const char *name, struct stat *st) {
    int fd = *(int *)((char *)real + 3 * sizeof(void *));
    struct stat named;
    if (fd < 0 || fstat(fd, st) != 0 || stat(name, &named) != 0) return -1;
    if (st->st_dev != named.st_dev || st->st_ino != named.st_ino || !S_ISREG(st->st_mode)) return -1;
    return fd;
}

static int obs_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *out_flags) {
    ObsFile *f = (ObsFile *)file;
    memset(f, 0, sizeof *f);
    f->real = (sqlite3_file *)(f + 1);
    f->fd = -1;
    int rc = base_vfs->xOpen(base_vfs, name, f->real, flags, out_flags);
    if (rc != SQLITE_OK) {
        /* The unix VFS leaves its file closed on failure; so do we. */
        f->real->pMethods = NULL;
        return rc;
    }
    if (f->real->pMethods == NULL) return rc;
    f->base.pMethods = &observer_methods;
    if (!(flags & SQLITE_OPEN_MAIN_DB) || name == NULL || strcmp(base_vfs->zName, "unix") != 0) return rc;
    struct stat st;
    int fd = descriptor_of(f->real, name, &st);
    if (fd < 0) return rc;
    f->fd = fd;
    f->dev = st.st_dev;
    f->ino = st.st_ino;
    int readonly = out_flags ? (*out_flags & SQLITE_OPEN_READONLY) != 0 : (flags & SQLITE_OPEN_READONLY) != 0;
    if (vfs == &observer_vfs && readonly && observer_enabled && ctime_rule_of(fd) >= 0) {
        f->kind = KIND_OBSERVER;
        f->ctimeRule = ctime_rule_of(fd);
        /* `sqlive_budget=BYTES` in the URI: this file's own budget. */
        sqlite3_int64 budget = sqlite3_uri_int64(name, "sqlive_budget", (sqlite3_int64)observer_budget);
        f->budget = budget < 0 ? 0 : (size_t)budget;
        f->follower = sqlive_is_follow_target(name);
    } else if (!readonly) {
        f->kind = KIND_TRACKED;
    }
    return rc;
}

static void register_vfses(void) {
    base_vfs = sqlite3_vfs_find(NULL);
    if (base_vfs == NULL) return;
    const char *disabled = getenv("SQLIVE_OBSERVER");
    if (disabled && strcmp(disabled, "off") == 0) observer_enabled = 0;
    observer_vfs = *base_vfs;
    observer_vfs.pNext = NULL;
    observer_vfs.szOsFile = (int)sizeof(ObsFile) + base_vfs->szOsFile;
    observer_vfs.xOpen = obs_open;
    tracking_vfs = observer_vfs;
    observer_vfs.zName = "sqlive-observer";
    tracking_vfs.zName = "sqlive";
    register_result = sqlite3_vfs_register(&observer_vfs, 0);
    if (register_result == SQLITE_OK) register_result = sqlite3_vfs_register(&tracking_vfs, 0);
}

int sqlive_observer_vfs_register(void) {
    pthread_once(&register_once, register_vfses);
    return register_result;
}

void sqlive_observer_set_budget(long long bytes) { observer_budget = bytes < 0 ? 0 : (size_t)bytes; }

int sqlive_observer_enabled(void) { return observer_enabled; }

int sqlive_observer_stats_of(sqlite3 *db, const char *schema, sqlive_observer_stats *out) {
    memset(out, 0, sizeof *out);
    return sqlite3_file_control(db, schema, SQLIVE_FCNTL_OBSERVER_STATS, out);
}

int sqlive_observer_pages(sqlite3 *db, sqlive_observer_pages_request *request) {
    return sqlite3_file_control(db, "main", SQLIVE_FCNTL_OBSERVER_PAGES, request);
}

int sqlive_observer_descriptor(sqlite3 *db) {
    sqlite3_file *file = NULL;
    if (sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &file) != SQLITE_OK || file == NULL ||
        file->pMethods != &observer_methods)
        return -1;
    return ((ObsFile *)file)->fd;
}
