/*
 * hex.c - the hex digit tables of bc_hex.h.
 */
#include "bc_hex.h"

const char bc_hex_upper[16] = {'0', '1', '2', '3', '4', '5', '6', '7',
                               '8', '9', 'A', 'B', 'C', 'D', 'E', 'F'};
const char bc_hex_lower[16] = {'0', '1', '2', '3', '4', '5', '6', '7',
                               '8', '9', 'a', 'b', 'c', 'd', 'e', 'f'};
