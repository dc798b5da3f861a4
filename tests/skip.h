/*
 * skip.h - a skipped test case shows as skipped in ctest.
 *
 * cmocka's skip() marks a case skipped, but cmocka_run_group_tests() counts
 * only failures, so the executable exits 0 and ctest prints "Passed". A test
 * that cannot run a case (allocation wrappers not linked, ...) calls
 * BC_SKIP() instead, and main() returns bc_test_status() of cmocka's result:
 * 1 when a case failed, else BC_SKIP_RETURN_CODE when a case was skipped,
 * else 0. tests/CMakeLists.txt defines BC_SKIP_RETURN_CODE and registers it
 * as each test's SKIP_RETURN_CODE, so ctest then says "Skipped".
 *
 * Include it in one file of a test executable, after <cmocka.h>.
 */
#ifndef BC_TESTS_SKIP_H
#define BC_TESTS_SKIP_H

#ifndef BC_SKIP_RETURN_CODE
#error "BC_SKIP_RETURN_CODE comes from tests/CMakeLists.txt"
#endif

static int bc_skipped_cases;

/* Skip the running case (does not return) and remember that one was. */
#define BC_SKIP()                                                              \
    do {                                                                       \
        bc_skipped_cases++;                                                    \
        skip();                                                                \
    } while (0)

/* The exit status of a test executable whose cmocka run gave failed. */
static inline int bc_test_status(int failed)
{
    if (failed != 0)
        return 1;
    return bc_skipped_cases != 0 ? BC_SKIP_RETURN_CODE : 0;
}

#endif /* BC_TESTS_SKIP_H */
