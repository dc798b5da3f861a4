/*
 * version.c - the version of the library linked in (bloomcrawl/version.h).
 */
#include "bloomcrawl/version.h"

const char *bc_version(void)
{
    return BC_VERSION_STRING;
}
