#include <sqlite3.h>
#include <string.h>
#include "CSQLiveSupport.h"

int sqlive_format_real(double value, char *buffer, int size) {
    sqlite3_snprintf(size, buffer, "%!.15g", value);
    return (int)strlen(buffer);
}

int sqlive_set_double_quoted_strings(sqlite3 *db, int enabled) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DML, enabled, (int *)0);
}
