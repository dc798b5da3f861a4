/*
 * fd_limit.h - a process with exactly N descriptors to spare, for the
 * tests of local failures (EMFILE).
 *
 * RLIMIT_NOFILE bounds descriptor numbers, not their count: open()
 * returns the lowest free number, and fails with EMFILE when none below
 * the limit is free. limit_fds(spare) first holds every free number
 * below the highest open one (opening /dev/null into them), then lowers
 * the soft limit to the highest + 1 + spare: exactly spare more
 * descriptors can be opened. release_fds() restores the limit and closes
 * what it held. Include it in one file of a test executable.
 */
#ifndef BC_TESTS_FD_LIMIT_H
#define BC_TESTS_FD_LIMIT_H

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

static int fd_limit_held[1024];
static size_t fd_limit_count;

static void limit_fds(unsigned spare, struct rlimit *saved)
{
    int top = 0;
    DIR *d = opendir("/proc/self/fd");
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (atoi(e->d_name) > top)
            top = atoi(e->d_name);
    closedir(d);
    fd_limit_count = 0;
    for (;;) {
        int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        if (fd > top) {
            close(fd);
            break;
        }
        assert_true(fd_limit_count <
                    sizeof(fd_limit_held) / sizeof(fd_limit_held[0]));
        fd_limit_held[fd_limit_count++] = fd;
    }
    assert_int_equal(getrlimit(RLIMIT_NOFILE, saved), 0);
    struct rlimit lim = *saved;
    lim.rlim_cur = (rlim_t)top + 1 + spare;
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &lim), 0);
}

static void release_fds(const struct rlimit *saved)
{
    assert_int_equal(setrlimit(RLIMIT_NOFILE, saved), 0);
    while (fd_limit_count)
        close(fd_limit_held[--fd_limit_count]);
}

#endif /* BC_TESTS_FD_LIMIT_H */
