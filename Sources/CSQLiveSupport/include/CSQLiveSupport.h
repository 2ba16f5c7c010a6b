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

typedef struct sqlite3 sqlite3;

/// Turns the acceptance of double-quoted string literals in DML on or off
/// on a connection (`SQLITE_DBCONFIG_DQS_DML`); returns an SQLite result
/// code. `sqlite3_db_config` is variadic, which Swift cannot call.
int sqlive_set_double_quoted_strings(sqlite3 *db, int enabled);

#endif
