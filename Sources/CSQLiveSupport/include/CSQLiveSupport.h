#ifndef SQLIVE_CSQLIVESUPPORT_H
#define SQLIVE_CSQLIVESUPPORT_H

/// Formats a REAL the way SQLite's own printf does for `%.15g`, into
/// `buffer` (at least 32 bytes). Returns the number of bytes written.
///
/// A C function because Swift can only reach `snprintf` through
/// `withVaList`, which allocates and boxes its arguments for every call:
/// this runs once per REAL cell of every printed result.
int sqlive_format_real(double value, char *buffer, int size);

#endif
