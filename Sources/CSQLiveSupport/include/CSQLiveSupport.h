#ifndef SQLIVE_CSQLIVESUPPORT_H
#define SQLIVE_CSQLIVESUPPORT_H

/// Formats a REAL exactly as the sqlite3 shell prints it (SQLite's own
/// `%!.15g`: up to 15 significant digits, and always a decimal point, as in
/// `1.0` or `1.0e+20`), into `buffer`. Returns the number of bytes written.
///
/// A C function for two reasons: Swift can only reach variadic C functions
/// through `withVaList`, which allocates and boxes its arguments on every
/// call, and SQLite's float formatting is both the reference and much
/// faster than glibc's `%g`. It runs once per REAL cell of every result.
int sqlive_format_real(double value, char *buffer, int size);

/// Formats a REAL with SQLite's `%!.*g` and `digits` significant digits
/// (the sqlite3 shell's `.dump` writes `%!.20g`), into `buffer`. Returns
/// the number of bytes written.
int sqlive_format_real_digits(double value, int digits, char *buffer, int size);

typedef struct sqlite3 sqlite3;

/// Turns the acceptance of double-quoted string literals in DML on or off
/// on a connection (`SQLITE_DBCONFIG_DQS_DML`); returns an SQLite result
/// code. `sqlite3_db_config` is variadic, which Swift cannot call.
int sqlive_set_double_quoted_strings(sqlite3 *db, int enabled);

/// Lets closing `db` checkpoint a WAL file and delete it, as the last
/// connection to a file does by default, or not
/// (`SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE`); returns an SQLite result code.
int sqlive_set_checkpoint_on_close(sqlite3 *db, int enabled);

/// Sets (0 or 1) or reads (-1) an on/off setting of `db`
/// (`SQLITE_DBCONFIG_DEFENSIVE`, `SQLITE_DBCONFIG_WRITABLE_SCHEMA`…); the
/// setting after the call goes to `result` when it is not NULL. Returns an
/// SQLite result code.
int sqlive_db_config_flag(sqlite3 *db, int option, int value, int *result);

/// Makes a crash (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP: a
/// Swift runtime trap among them) write one line on standard error before
/// the process ends with the signal, so that a server never dies silently.
void sqlive_install_crash_reporter(void);

/// Gives the pages glibc's allocator holds free back to the system
/// (`malloc_trim(0)`); returns whether some were.
int sqlive_release_free_memory(void);

/// Makes glibc's allocator map every block of `threshold` bytes or more
/// on its own (`mallopt(M_MMAP_THRESHOLD)`), which also ends its dynamic
/// threshold: such blocks go back to the system when freed.
void sqlive_map_large_blocks(int threshold);

/// The bytes glibc's allocator has handed out and not had back
/// (`mallinfo2`: `uordblks + hblkhd`).
long long sqlive_heap_in_use(void);


/// Receives what the planner asks of a probe table while a statement is
/// prepared: a constraint on `column` (`SQLITE_INDEX_CONSTRAINT_*` in
/// `op`, `usable` as the planner offered it), or, with `order_by` set, a
/// term of the ORDER BY it would like the table to deliver (`desc`).
/// `column` is -1 for the rowid. Each of the planner's calls starts with
/// `op` -1 (and no column).
typedef void (*sqlive_probe_record)(
    void *context, const char *table, int column, int op, int usable, int order_by, int desc);

/// Registers the module `sqlive_planner_probe` on `db`: virtual tables that
/// hold no rows and accept every constraint, created as
/// `CREATE VIRTUAL TABLE t USING sqlive_planner_probe("a", "b", ...)` with
/// the real table's columns. Preparing a statement over them makes SQLite's
/// planner call `record` for every constraint and ORDER BY it could hand to
/// each table, in every join order it weighs: which columns an index could
/// serve, in the planner's own terms. Statements over them are prepared,
/// never run (they would return no rows). Returns an SQLite result code.
int sqlive_register_planner_probe(sqlite3 *db, sqlive_probe_record record, void *context);

/// Takes the authorizer off `db` until `sqlive_resume_authorizer`, if the
/// one it has is known (set through `sqlite3_set_authorizer` in this
/// process, as GRDB sets its own when it opens a connection). Returns 1
/// when it was taken off, 0 otherwise (then nothing changed). Call both on
/// the connection's own thread, with no statement of it being stepped.
int sqlive_suspend_authorizer(sqlite3 *db);

/// Puts back the authorizer `sqlive_suspend_authorizer` took off.
void sqlive_resume_authorizer(sqlite3 *db);

/// Turns SQLite's global memory statistics off (`SQLITE_CONFIG_MEMSTATUS`),
/// which must happen before SQLite initializes: returns `SQLITE_OK`, or
/// `SQLITE_MISUSE` once SQLite has. `sqlite3_config` is variadic.
int sqlive_disable_memory_statistics(void);

/// Receives SQLite's error log (`sqlite3_log`): the result code and the message.
typedef void (*sqlive_error_log)(void *unused, int code, const char *message);

/// Sends SQLite's error log to `callback` (`SQLITE_CONFIG_LOG`), which must
/// happen before SQLite initializes: returns `SQLITE_OK`, or
/// `SQLITE_MISUSE` once SQLite has. `sqlite3_config` is variadic.
int sqlive_configure_error_log(sqlive_error_log callback);

/// An authorizer callback, as `sqlite3_set_authorizer` takes it.
typedef int (*sqlive_authorizer_callback)(
    void *argument, int action, const char *a, const char *b, const char *c, const char *d);

/// Sets a guard on `db` (`NULL` removes it): an authorizer asked before the
/// connection's own (GRDB's), also while `sqlive_suspend_authorizer` has
/// set that one aside. A verdict other than `SQLITE_OK` is SQLite's answer;
/// `SQLITE_OK` passes the question on. For the sqlite3 shell's safe mode.
/// Call it on the connection's own thread. Returns an SQLite result code.
int sqlive_set_authorizer_guard(sqlite3 *db, sqlive_authorizer_callback guard, void *argument);

/// The client guard's levels (`sqlive_set_client_guard`).
enum {
    /// Off: the session's own user.
    SQLIVE_CLIENT_NONE = 0,
    /// A server's client: none of the sqlite3 shell's functions that reach
    /// files or run programs (`readfile`, `writefile`, `edit`, `fsdir`,
    /// `zipfile`), nor `load_extension`.
    SQLIVE_CLIENT = 1,
    /// A read-only server's client: also no `ATTACH`, `VACUUM` or `VACUUM
    /// INTO` (SQLite runs both as an ATTACH of their target, which the
    /// authorizer is asked about), and no `PRAGMA temp_store`,
    /// `temp_store_directory` or `data_store_directory` with a value.
    SQLIVE_CLIENT_READONLY = 2,
};

/// Sets the client guard of `db` to `level` (`SQLIVE_CLIENT_…`): asked
/// before the guard and the connection's own authorizer while the
/// statements of a server's client are prepared on a connection the
/// session shares. The first call that turns it on installs it (one
/// `sqlite3_set_authorizer`); later ones only store the level. Returns
/// the previous level, or -1 when it cannot be set. Call it on the
/// connection's own thread.
int sqlive_set_client_guard(sqlite3 *db, int level);

/// The client guard's level on `db` now (0 when none was set).
int sqlive_client_guard_level(sqlite3 *db);

/// What the client guard refused last on `db`, and forgets it: the
/// authorizer's action code (`SQLITE_ATTACH`, `SQLITE_FUNCTION`,
/// `SQLITE_PRAGMA`; 0 when nothing), and in `name` (up to `size` bytes,
/// with its terminator) the function, PRAGMA or file it named.
int sqlive_take_client_refusal(sqlite3 *db, char *name, int size);

/// sqlive's VFSes over the system's default (ObserverVFS.c):
/// `sqlive-observer`, whose read-only main databases are read without a
/// lock in rollback-journal modes, each read transaction proven whole; and
/// `sqlive`, which passes everything through and counts, per file, its
/// read-write connections that hold PENDING or EXCLUSIVE (what an observer
/// in the same process cannot see with `fcntl`). Registers both once per
/// process (neither becomes the default); returns an SQLite result code.
/// `SQLIVE_OBSERVER=off` in the environment makes observers take SQLite's
/// ordinary locks (for comparisons).
int sqlive_observer_vfs_register(void);

/// What an observed file has done since it was opened.
typedef struct {
    /// 1 when the file is read lock-free (0: ordinary locks).
    int observing;
    /// Generations begun; read transactions that found the file unchanged.
    long long generations, reuses;
    /// Pages read ahead at the start of generations; pages served from
    /// those kept; pages read from the file during a transaction.
    long long prefetched, hits, misses;
    /// Reads refused because the file was written during the transaction
    /// (each is read again); transactions begun while a writer held
    /// PENDING or EXCLUSIVE (SQLite's busy handler waited); waits for the
    /// clock tick a write happened in to pass; transactions read with
    /// SQLite's locks because the file is in WAL mode.
    long long torn, writerWaits, tickWaits, walGenerations;
    /// Generations begun again because the file was written while the
    /// pages were read ahead (nothing had been handed to SQLite yet).
    long long restarts;
    /// Bytes of pages kept now.
    long long bytesKept;
} sqlive_observer_stats;

/// The `sqlite3_file_control` op that copies an observed file's
/// `sqlive_observer_stats` into its argument.
#define SQLIVE_FCNTL_OBSERVER_STATS 0x53510001

/// The statistics of `schema` ("main") on `db`; returns `SQLITE_NOTFOUND`
/// (and zeros) when the file was not opened through sqlive's VFSes.
int sqlive_observer_stats_of(sqlite3 *db, const char *schema, sqlive_observer_stats *out);

/// What `sqlive_observer_pages` does.
typedef enum {
    /// Starts recording the pages read (call between statements, inside a
    /// read transaction): `generation` is set.
    SQLIVE_PAGES_RECORD = 1,
    /// Ends the recording: `pages` (0-based page indexes, valid until the
    /// next call) and `count`, read in generation `generation`.
    SQLIVE_PAGES_RECORDED = 2,
    /// Inside a read transaction that has begun: `unchanged` is 1 when page
    /// 1 (less what every commit rewrites) and every page of `pages` are
    /// byte for byte what they were in generation `generationBefore`, and
    /// the schema cookie too; `generation` is the current one.
    SQLIVE_PAGES_UNCHANGED = 3,
    /// Returns `SQLITE_OK` when the connection's last read transaction on
    /// the main file was a WAL one (no page can be recorded then), without
    /// reading anything: a hint, right until the journal mode changes.
    SQLIVE_PAGES_LAST_WAS_WAL = 4,
    /// Outside a read transaction: lets go of the pages kept and of the
    /// set read ahead at the next generation, which then compares nothing
    /// (every page counts as changed, once). Returns `SQLITE_MISUSE` inside
    /// a read transaction.
    SQLIVE_PAGES_FORGET = 5,
    /// The pages read from now on are neither kept nor read ahead at the
    /// next generation (a read whose pages nothing compares: a live query
    /// kept from rows), until `SQLIVE_PAGES_KEEP`.
    SQLIVE_PAGES_PASS_BY = 6,
    /// Pages read are kept again (the default).
    SQLIVE_PAGES_KEEP = 7,
} sqlive_observer_pages_op;

typedef struct {
    sqlive_observer_pages_op op;
    const unsigned *pages;
    unsigned count;
    unsigned generation;
    unsigned generationBefore;
    int unchanged;
} sqlive_observer_pages_request;

#define SQLIVE_FCNTL_OBSERVER_PAGES 0x53510002

/// Records and compares the pages statements read on an observer
/// connection's main file (rollback-journal modes only): returns
/// `SQLITE_OK`, or `SQLITE_NOTFOUND` where it cannot (not observed, a WAL
/// file, a read overtaken, a recording incomplete).
int sqlive_observer_pages(sqlite3 *db, sqlive_observer_pages_request *request);

/// The most bytes of pages an observed file keeps (64 MiB by default; a
/// file opened with the URI parameter `sqlive_budget=BYTES` has its own).
void sqlive_observer_set_budget(long long bytes);

/// 0 when `SQLIVE_OBSERVER=off` turned observation off.
int sqlive_observer_enabled(void);

/// Confines a connection for statements an agent sends (Confinement.c):
/// defensive mode, no extension loading, no writable or trusted schema, no
/// ATTACH (`SQLITE_LIMIT_ATTACHED` 0), and an authorizer that refuses
/// ATTACH, DETACH, transactions, every PRAGMA but a list of those that read,
/// and `load_extension`. Whether a statement writes is SQLite's
/// `sqlite3_stmt_readonly`, asked before it runs. Returns an SQLite result
/// code.
int sqlive_confine(sqlite3 *db);

/// Whether `path` is a Litestream follow target (`PATH-txid` beside it,
/// holding 16 hexadecimal digits): the observer VFS then reads it as a
/// rollback file with a change counter of its own, and never locks it.
int sqlive_is_follow_target(const char *path);

/// The file descriptor of the main database of a connection opened through
/// the observer VFS (-1 for any other). It stays open as long as the
/// connection: `pread` on it from another thread reads the file, never the
/// connection's state. Never close it.
int sqlive_observer_descriptor(sqlite3 *db);

/// Whether a PRAGMA with this name and argument (NULL: none) only reads: a
/// setting read without an argument, or a list read with the name of what
/// to list (`table_info(t)`). Every other PRAGMA may change the connection
/// it is prepared on — many act while SQLite *prepares* them
/// (`locking_mode`, `cache_size`, `query_only`): such a statement must
/// never be prepared on a connection sqlive shares.
int sqlive_pragma_only_reads(const char *name, const char *argument);

/// Gives a shared connection that only prepares others' statements (the
/// checker's) an authorizer that refuses every PRAGMA that does not only
/// read (`sqlive_pragma_only_reads`): preparing one fails with
/// SQLITE_AUTH and changes nothing. Returns an SQLite result code.
int sqlive_keep_connection_state(sqlite3 *db);

/// The configuration part of `sqlive_confine`, without the authorizer (for
/// a connection whose authorizer is GRDB's): defensive mode, no extension
/// loading, no writable or trusted schema, no ATTACH, which also makes
/// VACUUM and VACUUM INTO fail, and temporary storage in memory
/// (`PRAGMA temp_store = MEMORY`). Returns an SQLite result code.
int sqlive_confine_configuration(sqlite3 *db);

/// Interrupts statements of `db` that run past `nanoseconds` from now, or
/// once `*cancelled` is not 0 (when given: a flag that outlives the
/// statement, set with `sqlive_flag_set`) — a progress handler, checked
/// every 1,000 virtual machine steps. Unlike `sqlite3_interrupt`, a
/// cancellation that comes before the statement's first step is not lost.
/// Returns what `sqlive_deadline_end` takes (NULL when out of memory).
void *sqlive_deadline_begin(sqlite3 *db, long long nanoseconds, const int *cancelled);

/// Sets a flag that `sqlive_deadline_begin`'s handler reads, atomically.
void sqlive_flag_set(int *flag, int value);

/// Removes the deadline `sqlive_deadline_begin` set.
void sqlive_deadline_end(sqlite3 *db, void *deadline);

#endif
