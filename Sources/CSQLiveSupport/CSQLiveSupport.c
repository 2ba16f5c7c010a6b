#define _GNU_SOURCE /* RTLD_NEXT */
#include <sqlite3.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "CSQLiveSupport.h"

/* glibc's allocator only; elsewhere (musl) these do nothing. */
int sqlive_release_free_memory(void) {
#if defined(__GLIBC__)
    return malloc_trim(0);
#else
    return 0;
#endif
}

void sqlive_map_large_blocks(int threshold) {
#if defined(__GLIBC__)
    mallopt(M_MMAP_THRESHOLD, threshold);
#else
    (void)threshold;
#endif
}

long long sqlive_heap_in_use(void) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 info = mallinfo2();
    return (long long)(info.uordblks + info.hblkhd);
#elif defined(__GLIBC__)
    struct mallinfo info = mallinfo();
    return (long long)(unsigned)info.uordblks + (long long)(unsigned)info.hblkhd;
#else
    return 0;
#endif
}

int sqlive_format_real(double value, char *buffer, int size) {
    sqlite3_snprintf(size, buffer, "%!.15g", value);
    return (int)strlen(buffer);
}

int sqlive_format_real_digits(double value, int digits, char *buffer, int size) {
    sqlite3_snprintf(size, buffer, "%!.*g", digits, value);
    return (int)strlen(buffer);
}

int sqlive_set_double_quoted_strings(sqlite3 *db, int enabled) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DML, enabled, (int *)0);
}

int sqlive_set_checkpoint_on_close(sqlite3 *db, int enabled) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, !enabled, (int *)0);
}

int sqlive_db_config_flag(sqlite3 *db, int option, int value, int *result) {
    return sqlite3_db_config(db, option, value, result);
}

/* The planner probe: a virtual table module for the index advisor. */

typedef struct {
    sqlive_probe_record record;
    void *context;
} ProbeModule;

typedef struct {
    sqlite3_vtab base;
    ProbeModule *module;
    char *name;
} ProbeTable;

typedef struct {
    sqlite3_vtab_cursor base;
} ProbeCursor;

/* argv: module name, database name, table name, then the columns. */
static int probe_connect(
    sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out, char **error) {
    sqlite3_str *declaration = sqlite3_str_new(db);
    sqlite3_str_appendall(declaration, "CREATE TABLE x(");
    for (int i = 3; i < argc; i++) {
        if (i > 3) sqlite3_str_appendall(declaration, ", ");
        sqlite3_str_appendall(declaration, argv[i]);
    }
    sqlite3_str_appendall(declaration, ")");
    char *sql = sqlite3_str_finish(declaration);
    if (sql == NULL) return SQLITE_NOMEM;
    int code = sqlite3_declare_vtab(db, sql);
    sqlite3_free(sql);
    if (code != SQLITE_OK) {
        *error = sqlite3_mprintf("%s", sqlite3_errmsg(db));
        return code;
    }
    ProbeTable *table = sqlite3_malloc(sizeof(ProbeTable));
    if (table == NULL) return SQLITE_NOMEM;
    memset(table, 0, sizeof(ProbeTable));
    table->module = (ProbeModule *)aux;
    table->name = sqlite3_mprintf("%s", argv[2]);
    *out = &table->base;
    return SQLITE_OK;
}

static int probe_disconnect(sqlite3_vtab *vtab) {
    ProbeTable *table = (ProbeTable *)vtab;
    sqlite3_free(table->name);
    sqlite3_free(table);
    return SQLITE_OK;
}

static int probe_best_index(sqlite3_vtab *vtab, sqlite3_index_info *info) {
    ProbeTable *table = (ProbeTable *)vtab;
    ProbeModule *module = table->module;
    int usable = 0;
    module->record(module->context, table->name, -1, -1, 1, 0, 0); /* a new call */
    for (int i = 0; i < info->nConstraint; i++) {
        const struct sqlite3_index_constraint *constraint = &info->aConstraint[i];
        module->record(module->context, table->name, constraint->iColumn, constraint->op, constraint->usable, 0, 0);
        if (constraint->usable) usable++;
    }
    for (int i = 0; i < info->nOrderBy; i++) {
        module->record(module->context, table->name, info->aOrderBy[i].iColumn, 0, 1, 1, info->aOrderBy[i].desc);
    }
    /* Constrained lookups look cheaper, so the planner weighs every join
       order; the numbers only have to be consistent. */
    info->estimatedCost = 1000000.0 / (1.0 + usable);
    info->estimatedRows = 1000000 / (1 + usable * 100);
    return SQLITE_OK;
}

static int probe_open(sqlite3_vtab *vtab, sqlite3_vtab_cursor **out) {
    (void)vtab;
    ProbeCursor *cursor = sqlite3_malloc(sizeof(ProbeCursor));
    if (cursor == NULL) return SQLITE_NOMEM;
    memset(cursor, 0, sizeof(ProbeCursor));
    *out = &cursor->base;
    return SQLITE_OK;
}

static int probe_close(sqlite3_vtab_cursor *cursor) {
    sqlite3_free(cursor);
    return SQLITE_OK;
}

static int probe_filter(sqlite3_vtab_cursor *cursor, int index, const char *name, int argc, sqlite3_value **argv) {
    (void)cursor, (void)index, (void)name, (void)argc, (void)argv;
    return SQLITE_OK;
}

static int probe_next(sqlite3_vtab_cursor *cursor) {
    (void)cursor;
    return SQLITE_OK;
}

static int probe_eof(sqlite3_vtab_cursor *cursor) {
    (void)cursor;
    return 1;
}

static int probe_column(sqlite3_vtab_cursor *cursor, sqlite3_context *context, int column) {
    (void)cursor, (void)column;
    sqlite3_result_null(context);
    return SQLITE_OK;
}

static int probe_rowid(sqlite3_vtab_cursor *cursor, sqlite3_int64 *rowid) {
    (void)cursor;
    *rowid = 0;
    return SQLITE_OK;
}

/* Present so that UPDATE and DELETE prepare (and their WHERE is planned);
   never called, since nothing runs. */
static int probe_update(sqlite3_vtab *vtab, int argc, sqlite3_value **argv, sqlite3_int64 *rowid) {
    (void)vtab, (void)argc, (void)argv, (void)rowid;
    return SQLITE_READONLY;
}

static sqlite3_module probe_module = {
    .iVersion = 0,
    .xCreate = probe_connect,
    .xConnect = probe_connect,
    .xBestIndex = probe_best_index,
    .xDisconnect = probe_disconnect,
    .xDestroy = probe_disconnect,
    .xOpen = probe_open,
    .xClose = probe_close,
    .xFilter = probe_filter,
    .xNext = probe_next,
    .xEof = probe_eof,
    .xColumn = probe_column,
    .xRowid = probe_rowid,
    .xUpdate = probe_update,
};

int sqlive_register_planner_probe(sqlite3 *db, sqlive_probe_record record, void *context) {
    ProbeModule *module = sqlite3_malloc(sizeof(ProbeModule));
    if (module == NULL) return SQLITE_NOMEM;
    module->record = record;
    module->context = context;
    return sqlite3_create_module_v2(db, "sqlive_planner_probe", &probe_module, module, sqlite3_free);
}

/* GRDB's authorizer, set aside while sqlive runs statements of its own.
 *
 * GRDB registers an authorizer on each of its connections, once, and needs
 * it for the statements it compiles itself. SQLite calls it while
 * preparing every statement of the connection, also those sqlive prepares
 * on SQLite's C API, for which it builds a region of Swift strings per
 * column read that nobody looks at. SQLite has no way to read an
 * authorizer back, so this definition of `sqlite3_set_authorizer`, linked
 * into the executable, comes before the library's: it notes each
 * connection's authorizer, then passes the call on to SQLite's own. */

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

typedef int (*sqlive_authorizer)(void *, int, const char *, const char *, const char *, const char *);

/* A guard asked before the connection's own authorizer (the sqlite3
 * shell's safe mode), and the client guard asked before both (a server's
 * client's statements, `sqlive_set_client_guard`): what SQLite is given
 * while either is set. */
typedef struct {
    sqlive_authorizer guard;
    void *guard_argument;
    sqlive_authorizer callback;
    void *argument;
    /* The connection's own authorizer set aside (`sqlive_suspend_authorizer`). */
    int suspended;
    /* Set once a client guard was first asked for: this stays SQLite's
     * authorizer from then on, so that turning the guard on and off is a
     * store, not an `sqlite3_set_authorizer` (which expires every
     * prepared statement of the connection). */
    int client_installed;
    /* Atomic: the client guard's level (0: off). */
    int client_level;
    /* The client guard's last refusal: its action (0: none) and the name
     * it refused (a function, a PRAGMA, a file). */
    int refused_action;
    char refused_name[256];
} GuardedAuthorizer;

typedef struct {
    sqlite3 *db;
    sqlive_authorizer callback;
    void *argument;
    /* Allocated once a guard is set, kept (SQLite may hold it) until the
     * entry is reused by another connection. */
    GuardedAuthorizer *guarded;
    int suspended;
} AuthorizerRegistration;

/* Guarded by registrations_lock. One entry per connection that set an
 * authorizer, replaced when it sets another. An entry outlives its
 * connection (SQLite says nothing of closes here); a new connection at the
 * same address replaces it when it sets its own, and sqlive only restores
 * authorizers on GRDB's connections, which always set one when they open. */
static pthread_mutex_t registrations_lock = PTHREAD_MUTEX_INITIALIZER;
static AuthorizerRegistration *registrations;
static size_t registration_count;
static size_t registration_capacity;

typedef int (*set_authorizer_function)(sqlite3 *, sqlive_authorizer, void *);
static set_authorizer_function library_set_authorizer;
static pthread_once_t library_once = PTHREAD_ONCE_INIT;

static void find_library_set_authorizer(void) {
    library_set_authorizer = (set_authorizer_function)dlsym(RTLD_NEXT, "sqlite3_set_authorizer");
}

static int call_library_set_authorizer(sqlite3 *db, sqlive_authorizer callback, void *argument) {
    pthread_once(&library_once, find_library_set_authorizer);
    if (library_set_authorizer == NULL) return SQLITE_ERROR;
    return library_set_authorizer(db, callback, argument);
}

/* The functions a server's client never reaches: the sqlite3 shell's,
 * which read and write any file or run a program, and extension loading. */
static const char *const client_refused_functions[] = {
    "readfile", "writefile", "edit", "fsdir", "zipfile", "zipfile_cds", "load_extension", "fts3_tokenizer",
};

/* PRAGMAs that would move temporary storage back to disk (or elsewhere). */
static const char *const client_refused_pragmas[] = {"temp_store", "temp_store_directory", "data_store_directory"};

/* Whether the client guard at `level` refuses the action. */
static int client_refuses(int level, int action, const char *first, const char *second) {
    switch (action) {
    case SQLITE_FUNCTION:
        if (second == NULL) return 0;
        for (size_t i = 0; i < sizeof client_refused_functions / sizeof client_refused_functions[0]; i++) {
            if (strcasecmp(second, client_refused_functions[i]) == 0) return 1;
        }
        return 0;
    case SQLITE_ATTACH:
        /* ATTACH, and VACUUM and VACUUM INTO, which SQLite runs as an
         * ATTACH of their target: another file opened, or written. */
        return level >= SQLIVE_CLIENT_READONLY;
    case SQLITE_PRAGMA:
        if (level < SQLIVE_CLIENT_READONLY || first == NULL || second == NULL) return 0;
        for (size_t i = 0; i < sizeof client_refused_pragmas / sizeof client_refused_pragmas[0]; i++) {
            if (strcasecmp(first, client_refused_pragmas[i]) == 0) return 1;
        }
        return 0;
    default:
        return 0;
    }
}

/* The client guard, the guard, then the connection's own authorizer (unless
 * set aside) while the guards allow. */
static int guarded_authorizer(
    void *argument, int action, const char *a, const char *b, const char *c, const char *d) {
    GuardedAuthorizer *guarded = argument;
    int level = __atomic_load_n(&guarded->client_level, __ATOMIC_ACQUIRE);
    if (level != 0 && client_refuses(level, action, a, b)) {
        const char *name = action == SQLITE_FUNCTION ? b : a;
        guarded->refused_action = action;
        snprintf(guarded->refused_name, sizeof guarded->refused_name, "%s", name != NULL ? name : "");
        return SQLITE_DENY;
    }
    if (guarded->guard != NULL) {
        int verdict = guarded->guard(guarded->guard_argument, action, a, b, c, d);
        if (verdict != SQLITE_OK) return verdict;
    }
    if (guarded->suspended || guarded->callback == NULL) return SQLITE_OK;
    return guarded->callback(guarded->argument, action, a, b, c, d);
}

/* Whether SQLite is given `guarded_authorizer` rather than the
 * connection's own authorizer. */
static int uses_guarded(const GuardedAuthorizer *guarded) {
    return guarded != NULL && (guarded->guard != NULL || guarded->client_installed);
}

/* Gives SQLite the guards and the authorizer (`suspended`: the
 * connection's own authorizer set aside). */
static int install_guarded(sqlite3 *db, GuardedAuthorizer *guarded, int suspended) {
    guarded->suspended = suspended;
    return call_library_set_authorizer(db, guarded_authorizer, guarded);
}

/* The entry of `db`, or NULL; with the lock held. */
static AuthorizerRegistration *registration_of(sqlite3 *db) {
    for (size_t i = 0; i < registration_count; i++) {
        if (registrations[i].db == db) return &registrations[i];
    }
    return NULL;
}

int sqlite3_set_authorizer(sqlite3 *db, sqlive_authorizer callback, void *argument) {
    pthread_mutex_lock(&registrations_lock);
    AuthorizerRegistration *entry = registration_of(db);
    if (entry == NULL && registration_count == registration_capacity) {
        size_t capacity = registration_capacity == 0 ? 16 : registration_capacity * 2;
        AuthorizerRegistration *grown = realloc(registrations, capacity * sizeof *grown);
        if (grown != NULL) {
            registrations = grown;
            registration_capacity = capacity;
        }
    }
    if (entry == NULL && registration_count < registration_capacity) {
        entry = &registrations[registration_count++];
    }
    if (entry != NULL) {
        if (entry->db != db) {
            /* Another connection at this address, or a new entry. */
            entry->guarded = NULL;
            entry->suspended = 0;
        }
        entry->db = db;
        entry->callback = callback;
        entry->argument = argument;
        if (uses_guarded(entry->guarded)) {
            entry->guarded->callback = callback;
            entry->guarded->argument = argument;
            pthread_mutex_unlock(&registrations_lock);
            return install_guarded(db, entry->guarded, 0);
        }
    }
    pthread_mutex_unlock(&registrations_lock);
    return call_library_set_authorizer(db, callback, argument);
}

int sqlive_suspend_authorizer(sqlite3 *db) {
    pthread_mutex_lock(&registrations_lock);
    AuthorizerRegistration *entry = registration_of(db);
    int known = entry != NULL && entry->callback != NULL;
    GuardedAuthorizer *guarded = entry != NULL ? entry->guarded : NULL;
    if (known) entry->suspended = 1;
    pthread_mutex_unlock(&registrations_lock);
    if (!known) return 0;
    if (uses_guarded(guarded)) return install_guarded(db, guarded, 1) == SQLITE_OK;
    return call_library_set_authorizer(db, NULL, NULL) == SQLITE_OK;
}

void sqlive_resume_authorizer(sqlite3 *db) {
    pthread_mutex_lock(&registrations_lock);
    AuthorizerRegistration *entry = registration_of(db);
    sqlive_authorizer callback = entry != NULL ? entry->callback : NULL;
    void *argument = entry != NULL ? entry->argument : NULL;
    GuardedAuthorizer *guarded = entry != NULL ? entry->guarded : NULL;
    if (entry != NULL) entry->suspended = 0;
    pthread_mutex_unlock(&registrations_lock);
    if (uses_guarded(guarded)) {
        install_guarded(db, guarded, 0);
    } else if (callback != NULL) {
        call_library_set_authorizer(db, callback, argument);
    }
}

int sqlive_set_authorizer_guard(sqlite3 *db, sqlive_authorizer guard, void *argument) {
    pthread_mutex_lock(&registrations_lock);
    AuthorizerRegistration *entry = registration_of(db);
    if (entry == NULL) {
        /* A connection that never set an authorizer: note it now. */
        pthread_mutex_unlock(&registrations_lock);
        int code = sqlite3_set_authorizer(db, NULL, NULL);
        if (code != SQLITE_OK) return code;
        pthread_mutex_lock(&registrations_lock);
        entry = registration_of(db);
        if (entry == NULL) {
            pthread_mutex_unlock(&registrations_lock);
            return SQLITE_NOMEM;
        }
    }
    if (entry->guarded == NULL) {
        entry->guarded = calloc(1, sizeof(GuardedAuthorizer));
        if (entry->guarded == NULL) {
            pthread_mutex_unlock(&registrations_lock);
            return SQLITE_NOMEM;
        }
    }
    GuardedAuthorizer *guarded = entry->guarded;
    guarded->guard = guard;
    guarded->guard_argument = argument;
    guarded->callback = entry->callback;
    guarded->argument = entry->argument;
    int suspended = entry->suspended;
    sqlive_authorizer callback = entry->callback;
    void *callback_argument = entry->argument;
    int guarded_still = uses_guarded(guarded);
    pthread_mutex_unlock(&registrations_lock);
    if (!guarded_still) return call_library_set_authorizer(db, suspended ? NULL : callback, callback_argument);
    return install_guarded(db, guarded, suspended);
}

/* The entry of `db`, noted (with no authorizer) when it never set one, and
 * its guarded authorizer made; NULL when memory runs out. With the lock
 * held on return when not NULL. */
static GuardedAuthorizer *guarded_of(sqlite3 *db, AuthorizerRegistration **found) {
    pthread_mutex_lock(&registrations_lock);
    AuthorizerRegistration *entry = registration_of(db);
    if (entry == NULL) {
        pthread_mutex_unlock(&registrations_lock);
        if (sqlite3_set_authorizer(db, NULL, NULL) != SQLITE_OK) return NULL;
        pthread_mutex_lock(&registrations_lock);
        entry = registration_of(db);
        if (entry == NULL) {
            pthread_mutex_unlock(&registrations_lock);
            return NULL;
        }
    }
    if (entry->guarded == NULL) {
        entry->guarded = calloc(1, sizeof(GuardedAuthorizer));
        if (entry->guarded == NULL) {
            pthread_mutex_unlock(&registrations_lock);
            return NULL;
        }
        entry->guarded->callback = entry->callback;
        entry->guarded->argument = entry->argument;
        entry->guarded->suspended = entry->suspended;
    }
    *found = entry;
    return entry->guarded;
}

int sqlive_set_client_guard(sqlite3 *db, int level) {
    AuthorizerRegistration *entry = NULL;
    GuardedAuthorizer *guarded = guarded_of(db, &entry);
    if (guarded == NULL) return -1;
    int install = level != 0 && !guarded->client_installed;
    if (install) {
        guarded->client_installed = 1;
        guarded->callback = entry->callback;
        guarded->argument = entry->argument;
        guarded->suspended = entry->suspended;
    }
    if (level != 0) guarded->refused_action = 0;
    int previous = __atomic_exchange_n(&guarded->client_level, level, __ATOMIC_ACQ_REL);
    pthread_mutex_unlock(&registrations_lock);
    if (install && install_guarded(db, guarded, guarded->suspended) != SQLITE_OK) {
        __atomic_store_n(&guarded->client_level, previous, __ATOMIC_RELEASE);
        return -1;
    }
    return previous;
}

int sqlive_client_guard_level(sqlite3 *db) {
    pthread_mutex_lock(&registrations_lock);
    AuthorizerRegistration *entry = registration_of(db);
    int level = entry != NULL && entry->guarded != NULL
        ? __atomic_load_n(&entry->guarded->client_level, __ATOMIC_ACQUIRE) : 0;
    pthread_mutex_unlock(&registrations_lock);
    return level;
}

int sqlive_take_client_refusal(sqlite3 *db, char *name, int size) {
    pthread_mutex_lock(&registrations_lock);
    AuthorizerRegistration *entry = registration_of(db);
    int action = 0;
    if (entry != NULL && entry->guarded != NULL) {
        action = entry->guarded->refused_action;
        if (action != 0 && name != NULL && size > 0) snprintf(name, (size_t)size, "%s", entry->guarded->refused_name);
        entry->guarded->refused_action = 0;
    }
    pthread_mutex_unlock(&registrations_lock);
    return action;
}

int sqlive_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

/* The crash reporter: a line on standard error, then the signal's own end. */

#include <signal.h>
#include <string.h>
#include <unistd.h>

static void sqlive_crashed(int signal_number) {
    static const char prefix[] = "sqlive: crashed with signal ";
    char digits[4];
    int count = 0;
    int value = signal_number;
    do {
        digits[count++] = (char)('0' + value % 10);
        value /= 10;
    } while (value > 0 && count < 3);
    (void)!write(2, prefix, sizeof(prefix) - 1);
    while (count > 0) (void)!write(2, &digits[--count], 1);
    (void)!write(2, " (this is a bug in sqlive; please report it)\n", 46);
    /* SA_RESETHAND put the default action back: raising ends the process
       with the signal (a core dump where enabled, a non-zero status). */
    raise(signal_number);
}

void sqlive_install_crash_reporter(void) {
    static const int signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP};
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_handler = sqlive_crashed;
    action.sa_flags = (int)SA_RESETHAND | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    for (unsigned i = 0; i < sizeof(signals) / sizeof(signals[0]); i++) sigaction(signals[i], &action, 0);
}

int sqlive_configure_error_log(sqlive_error_log callback) {
    return sqlite3_config(SQLITE_CONFIG_LOG, callback, (void *)0);
}
