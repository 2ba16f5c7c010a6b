#include <sqlite3.h>
#include <string.h>
#include "CSQLiveSupport.h"

int sqlive_format_real(double value, char *buffer, int size) {
    sqlite3_snprintf(size, buffer, "%!.15g", value);
    return (int)strlen(buffer);
}
