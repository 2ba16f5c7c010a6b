/* A connection confined by SQLite itself: what an agent's statements may
 * and may not do is decided by the connection's configuration and its
 * authorizer, never by reading the SQL text (ConfinedReader.swift). */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include "CSQLiveSupport.h"

/* PRAGMAs that only read. Those marked 0 are settings: read with no
 * argument, refused with one (`PRAGMA user_version` reads it,
 * `PRAGMA user_version = 7` would set it). Those marked 1 take an
 * argument that names what to read (`PRAGMA table_info(t)`). Every other
 * PRAGMA is refused, `writable_schema`, `journal_mode = …` and
 * `wal_checkpoint` among them. */
static const struct {
    const char *name;
    int argument;
} sqlive_read_pragmas[] = {
    {"application_id", 0}, {"auto_vacuum", 0}, {"cache_size", 0}, {"collation_list", 0},
    {"compile_options", 0}, {"data_version", 0}, {"database_list", 0}, {"encoding", 0},
    {"foreign_key_check", 1}, {"foreign_key_list", 1}, {"foreign_keys", 0}, {"freelist_count", 0},
    {"function_list", 0}, {"index_info", 1}, {"index_list", 1}, {"index_xinfo", 1},
    {"integrity_check", 1}, {"journal_mode", 0}, {"module_list", 0}, {"page_count", 0},
    {"page_size", 0}, {"pragma_list", 0}, {"quick_check", 1}, {"schema_version", 0},
    {"table_info", 1}, {"table_list", 1}, {"table_xinfo", 1}, {"user_version", 0},
};

static int sqlive_pragma_reads(const char *name, const char *argument) {
    if (name == NULL) return 0;
    for (size_t i = 0; i < sizeof sqlive_read_pragmas / sizeof sqlive_read_pragmas[0]; i++) {
        if (strcasecmp(name, sqlive_read_pragmas[i].name) == 0) {
            return argument == NULL || sqlive_read_pragmas[i].argument;
        }
    }
    return 0;
}

static int sqlive_confined_authorizer(
    void *context, int action, const char *first, const char *second, const char *database, const char *trigger) {
    (void)context;
    (void)database;
    (void)trigger;
    switch (action) {
    case SQLITE_ATTACH:
    case SQLITE_DETACH:
        /* No other file is ever opened: no ATTACH, no VACUUM INTO. */
        return SQLITE_DENY;
    case SQLITE_TRANSACTION:
    case SQLITE_SAVEPOINT:
        /* One statement per call: a transaction left open would hold its
         * snapshot (and, in WAL mode, the checkpoint) between calls. */
        return SQLITE_DENY;
    case SQLITE_PRAGMA:
        return sqlive_pragma_reads(first, second) ? SQLITE_OK : SQLITE_DENY;
    case SQLITE_FUNCTION:
        /* `second` is the function's name. */
        if (second != NULL && (strcasecmp(second, "load_extension") == 0 || strcasecmp(second, "fts3_tokenizer") == 0))
            return SQLITE_DENY;
        return SQLITE_OK;
    default:
        return SQLITE_OK;
    }
}

int sqlive_pragma_only_reads(const char *name, const char *argument) {
    return sqlive_pragma_reads(name, argument);
}

static int sqlive_state_authorizer(
    void *context, int action, const char *first, const char *second, const char *database, const char *trigger) {
    (void)context;
    (void)database;
    (void)trigger;
    if (action == SQLITE_PRAGMA && !sqlive_pragma_reads(first, second)) return SQLITE_DENY;
    return SQLITE_OK;
}

int sqlive_keep_connection_state(sqlite3 *db) {
    return sqlite3_set_authorizer(db, sqlive_state_authorizer, NULL);
}

int sqlive_confine_configuration(sqlite3 *db) {
    int rc = SQLITE_OK;
    int off = 0, on = 1;
    if ((rc = sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, on, (int *)0)) != SQLITE_OK) return rc;
    if ((rc = sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, off, (int *)0)) != SQLITE_OK) return rc;
    if ((rc = sqlite3_db_config(db, SQLITE_DBCONFIG_WRITABLE_SCHEMA, off, (int *)0)) != SQLITE_OK) return rc;
    if ((rc = sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, off, (int *)0)) != SQLITE_OK) return rc;
    if ((rc = sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, off, (int *)0)) != SQLITE_OK) return rc;
    if ((rc = sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DML, off, (int *)0)) != SQLITE_OK) return rc;
    if ((rc = sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DDL, off, (int *)0)) != SQLITE_OK) return rc;
    /* ATTACH, and VACUUM (INTO), which attaches its target, fail. */
    sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
    /* Temporary tables, indexes and sorts stay in memory: no file is
     * written, not even one deleted as it is opened. */
    /* (Past an authorizer that keeps the connection's settings.) */
    int suspended = sqlive_suspend_authorizer(db);
    rc = sqlite3_exec(db, "PRAGMA temp_store = MEMORY", NULL, NULL, NULL);
    if (suspended) sqlive_resume_authorizer(db);
    return rc;
}

int sqlive_confine(sqlite3 *db) {
    int rc = sqlive_confine_configuration(db);
    if (rc != SQLITE_OK) return rc;
    return sqlite3_set_authorizer(db, sqlive_confined_authorizer, NULL);
}

/* The deadline of the statement running on a connection, and the flag
   that cancels it sooner (owned by the caller, who outlives the statement). */
struct sqlive_deadline {
    long long at; /* CLOCK_MONOTONIC nanoseconds */
    const int *cancelled;
};

void sqlive_flag_set(int *flag, int value) {
    __atomic_store_n(flag, value, __ATOMIC_RELEASE);
}

static long long sqlive_now(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

static int sqlive_deadline_passed(void *context) {
    const struct sqlive_deadline *deadline = context;
    if (deadline->cancelled != NULL && __atomic_load_n(deadline->cancelled, __ATOMIC_ACQUIRE)) return 1;
    return sqlive_now() >= deadline->at;
}

void *sqlive_deadline_begin(sqlite3 *db, long long nanoseconds, const int *cancelled) {
    struct sqlive_deadline *deadline = malloc(sizeof *deadline);
    if (deadline == NULL) return NULL;
    deadline->at = sqlive_now() + nanoseconds;
    deadline->cancelled = cancelled;
    /* Every 1,000 virtual machine steps: a clock read costs some 20 ns. */
    sqlite3_progress_handler(db, 1000, sqlive_deadline_passed, deadline);
    return deadline;
}

void sqlive_deadline_end(sqlite3 *db, void *deadline) {
    sqlite3_progress_handler(db, 0, NULL, NULL);
    free(deadline);
}
