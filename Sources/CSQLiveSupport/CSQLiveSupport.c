#include <stdio.h>
#include "CSQLiveSupport.h"

int sqlive_format_real(double value, char *buffer, int size) {
    return snprintf(buffer, (size_t)size, "%.15g", value);
}
