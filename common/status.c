/*
 * status.c - texts for the library's one status enum.
 *
 * The texts come from BC_STATUS_LIST in bloomcrawl/status.h, the list the
 * enum itself is made from: a status added there has its text, and the
 * table's index is the status's value (BC_OK 0, then in order).
 */
#include "bloomcrawl/status.h"

#define TEXT(name, text) [name] = text,
static const char *const texts[] = {BC_STATUS_LIST(TEXT)};
#undef TEXT

const char *bc_strerror(enum bc_status status)
{
    if ((unsigned)status < sizeof(texts) / sizeof(texts[0]))
        return texts[status];
    return "unknown status";
}
