#include <sqlite3.h>
#include <string.h>
#include "CSQLiveSupport.h"

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
