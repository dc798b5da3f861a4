/*
 * test_common.c - the shared toolkit of common/ (bc_buf.h, bc_hex.h,
 * bc_io.h, bc_bigarray.h) and the counter table's accessors
 * (bloomcrawl/counter.h): growth and the cap of the buffer, every byte
 * against a naive hex oracle, whole reads and writes through a pipe and a
 * file, both sides of the huge-page threshold, every counter type.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bc_bigarray.h"
#include "bc_buf.h"
#include "bc_clock.h"
#include "bc_hex.h"
#include "bc_io.h"
#include "bloomcrawl/counter.h"

/* ---- bc_buf ---- */

static void test_buf_growth(void **state)
{
    (void)state;
    struct bc_buf b;
    bc_buf_init(&b, 0);
    assert_null(b.data);
    assert_int_equal(b.len, 0);
    /* 10,000 single bytes: every growth keeps what was there, the NUL
     * follows the bytes, and the allocation at most doubles past need. */
    for (size_t i = 0; i < 10000; i++) {
        assert_int_equal(bc_buf_putc(&b, (char)('a' + i % 26)), BC_OK);
        assert_int_equal(b.len, i + 1);
        assert_true(b.cap >= b.len + 1);
        assert_true(b.cap <= 2 * (b.len + 1) || b.cap == 64);
        assert_int_equal(b.data[b.len], '\0');
    }
    for (size_t i = 0; i < 10000; i++)
        assert_int_equal(b.data[i], (char)('a' + i % 26));
    /* A large append at once, and a reserve that needs no growth. */
    char big[100000];
    memset(big, 'x', sizeof(big));
    assert_int_equal(bc_buf_append(&b, big, sizeof(big)), BC_OK);
    assert_int_equal(b.len, 110000);
    assert_int_equal(b.data[109999], 'x');
    size_t cap = b.cap;
    char *data = b.data;
    assert_int_equal(bc_buf_reserve(&b, cap - b.len - 1), BC_OK);
    assert_int_equal(b.cap, cap);
    assert_ptr_equal(b.data, data);
    /* An empty append on an unused buffer allocates the NUL. */
    struct bc_buf e;
    bc_buf_init(&e, 0);
    assert_int_equal(bc_buf_append(&e, NULL, 0), BC_OK);
    assert_non_null(e.data);
    assert_string_equal(e.data, "");
    bc_buf_free(&e);
    bc_buf_free(&b);
    assert_null(b.data);
    assert_int_equal(b.len, 0);
    assert_int_equal(b.cap, 0);
    /* Used again after free. */
    assert_int_equal(bc_buf_puts(&b, "again"), BC_OK);
    assert_string_equal(b.data, "again");
    bc_buf_free(&b);
}

static void test_buf_cap(void **state)
{
    (void)state;
    /* Both sides of the cap: max bytes fit, max + 1 do not, and a refused
     * call leaves data, len and cap as they were. */
    const size_t sizes[] = {1, 63, 64, 65, 100, 1000, 4096};
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        size_t max = sizes[s];
        struct bc_buf b;
        bc_buf_init(&b, max);
        for (size_t i = 0; i + 1 < max; i++)
            assert_int_equal(bc_buf_putc(&b, 'a'), BC_OK);
        assert_int_equal(bc_buf_putc(&b, 'b'), BC_OK); /* the max-th */
        assert_int_equal(b.len, max);
        char *data = b.data;
        size_t cap = b.cap;
        assert_int_equal(bc_buf_putc(&b, 'c'), BC_ERR_TOO_LARGE);
        assert_int_equal(bc_buf_puts(&b, "cd"), BC_ERR_TOO_LARGE);
        assert_int_equal(bc_buf_append(&b, "c", 1), BC_ERR_TOO_LARGE);
        assert_int_equal(bc_buf_printf(&b, "%d", 7), BC_ERR_TOO_LARGE);
        assert_int_equal(bc_buf_reserve(&b, 1), BC_ERR_TOO_LARGE);
        assert_int_equal(bc_buf_reserve(&b, SIZE_MAX), BC_ERR_TOO_LARGE);
        assert_ptr_equal(b.data, data);
        assert_int_equal(b.len, max);
        assert_int_equal(b.cap, cap);
        assert_int_equal(b.data[max - 1], 'b');
        assert_int_equal(b.data[max], '\0');
        /* An empty append still fits at the cap. */
        assert_int_equal(bc_buf_append(&b, NULL, 0), BC_OK);
        assert_int_equal(bc_buf_printf(&b, "%s", ""), BC_OK);
        assert_int_equal(b.len, max);
        bc_buf_free(&b);
    }
    /* One append larger than the cap on an empty buffer: nothing taken. */
    struct bc_buf b;
    bc_buf_init(&b, 10);
    assert_int_equal(bc_buf_append(&b, "0123456789A", 11), BC_ERR_TOO_LARGE);
    assert_null(b.data);
    assert_int_equal(b.len, 0);
    assert_int_equal(bc_buf_append(&b, "0123456789", 10), BC_OK);
    assert_string_equal(b.data, "0123456789");
    bc_buf_free(&b);
}

static void test_buf_printf_putc_puts(void **state)
{
    (void)state;
    struct bc_buf b;
    bc_buf_init(&b, 0);
    assert_int_equal(bc_buf_printf(&b, "%s=%d", "n", 42), BC_OK);
    assert_int_equal(bc_buf_putc(&b, ';'), BC_OK);
    assert_int_equal(bc_buf_puts(&b, " done"), BC_OK);
    assert_int_equal(bc_buf_printf(&b, "%s", ""), BC_OK);
    assert_string_equal(b.data, "n=42; done");
    assert_int_equal(b.len, strlen("n=42; done"));
    /* A formatted text longer than the first allocation (64). */
    assert_int_equal(bc_buf_printf(&b, "%0200d", 1), BC_OK);
    assert_int_equal(b.len, 10 + 200);
    assert_int_equal(b.data[b.len - 1], '1');
    assert_int_equal(b.data[b.len], '\0');
    /* putc of a NUL byte: counted in len, the contents are bytes. */
    assert_int_equal(bc_buf_putc(&b, '\0'), BC_OK);
    assert_int_equal(b.len, 211);
    bc_buf_free(&b);
    /* printf on an unused buffer of an empty text. */
    bc_buf_init(&b, 0);
    assert_int_equal(bc_buf_printf(&b, "%s", ""), BC_OK);
    assert_non_null(b.data);
    assert_string_equal(b.data, "");
    bc_buf_free(&b);
}

static void test_buf_clear_detach(void **state)
{
    (void)state;
    struct bc_buf b;
    bc_buf_init(&b, 0);
    assert_int_equal(bc_buf_puts(&b, "hello"), BC_OK);
    char *data = b.data;
    size_t cap = b.cap;
    bc_buf_clear(&b);
    assert_int_equal(b.len, 0);
    assert_string_equal(b.data, ""); /* memory kept, NUL at 0 */
    assert_ptr_equal(b.data, data);
    assert_int_equal(b.cap, cap);
    assert_int_equal(bc_buf_puts(&b, "world"), BC_OK);
    assert_ptr_equal(b.data, data);

    char *out = NULL;
    size_t len = 99;
    assert_int_equal(bc_buf_detach(&b, &out, &len), BC_OK);
    assert_ptr_equal(out, data);
    assert_int_equal(len, 5);
    assert_string_equal(out, "world");
    assert_null(b.data);
    assert_int_equal(b.len, 0);
    assert_int_equal(b.cap, 0);
    free(out);

    /* Detach of a never-used buffer: a fresh "" the caller frees. */
    struct bc_buf e;
    bc_buf_init(&e, 0);
    out = NULL;
    len = 99;
    assert_int_equal(bc_buf_detach(&e, &out, &len), BC_OK);
    assert_non_null(out);
    assert_string_equal(out, "");
    assert_int_equal(len, 0);
    free(out);
    /* Detach of a cleared buffer: its own memory, length 0. */
    assert_int_equal(bc_buf_puts(&e, "x"), BC_OK);
    bc_buf_clear(&e);
    assert_int_equal(bc_buf_detach(&e, &out, &len), BC_OK);
    assert_string_equal(out, "");
    assert_int_equal(len, 0);
    assert_null(e.data);
    free(out);
    /* Clear of a never-used buffer is harmless. */
    bc_buf_clear(&e);
    assert_null(e.data);
    bc_buf_free(&e);
}

/* The inline room and in-place writes of the hot paths. */
static void test_buf_room_truncate(void **state)
{
    (void)state;
    struct bc_buf b;
    bc_buf_init(&b, 100);
    assert_int_equal(bc_buf_room(&b), 0); /* no memory yet */
    assert_int_equal(bc_buf_reserve(&b, 10), BC_OK);
    assert_int_equal(b.cap, 64);
    assert_int_equal(bc_buf_room(&b), 63); /* all but the NUL's byte */
    memcpy(b.data + b.len, "abcdef", 6);
    bc_buf_truncate(&b, b.len + 6);
    assert_string_equal(b.data, "abcdef");
    assert_int_equal(bc_buf_room(&b), 57);
    bc_buf_truncate(&b, 2); /* drop a tail */
    assert_string_equal(b.data, "ab");
    assert_int_equal(b.len, 2);
    /* Filled to the byte: no room left, and the NUL still fits. */
    memset(b.data + b.len, 'x', bc_buf_room(&b));
    bc_buf_truncate(&b, b.len + bc_buf_room(&b));
    assert_int_equal(b.len, 63);
    assert_int_equal(bc_buf_room(&b), 0);
    assert_int_equal(b.data[63], '\0');
    bc_buf_free(&b);
    bc_buf_truncate(&b, 0); /* no memory: only the length */
    assert_int_equal(b.len, 0);
}

/* A cap below the first allocation's 64 bytes: the room never passes the
 * cap, so a tokenizer writing in place up to the room cannot go past it
 * (it could: room 62 of max 10, then every append was taken). */
static void test_buf_room_small_cap(void **state)
{
    (void)state;
    struct bc_buf b;
    bc_buf_init(&b, 10);
    assert_int_equal(bc_buf_putc(&b, 'a'), BC_OK);
    assert_true(b.cap <= 11);
    assert_int_equal(bc_buf_room(&b), 9);
    memset(b.data + b.len, 'x', bc_buf_room(&b));
    bc_buf_truncate(&b, b.len + bc_buf_room(&b));
    assert_int_equal(b.len, 10);
    assert_int_equal(bc_buf_putc(&b, 'c'), BC_ERR_TOO_LARGE);
    assert_int_equal(b.len, 10);
    bc_buf_free(&b);
}

/* ---- bc_hex ---- */

static int naive_hex(int c)
{
    const char *digits = "0123456789abcdef";
    const char *upper = "0123456789ABCDEF";
    for (int i = 0; i < 16; i++)
        if (c == digits[i] || c == upper[i])
            return i;
    return -1;
}

static void test_hex(void **state)
{
    (void)state;
    for (int c = 0; c <= 255; c++)
        assert_int_equal(bc_hex_value(c), naive_hex(c));
    assert_int_equal(bc_hex_value(-1), -1); /* EOF */
    for (int i = 0; i < 16; i++) {
        assert_int_equal(bc_hex_value(bc_hex_upper[i]), i);
        assert_int_equal(bc_hex_value(bc_hex_lower[i]), i);
        assert_int_equal(bc_hex_upper[i], "0123456789ABCDEF"[i]);
        assert_int_equal(bc_hex_lower[i], "0123456789abcdef"[i]);
    }
}

/* ---- bc_io ---- */

static void test_io_pipe(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    /* Less than a pipe's buffer (64 KiB), so one thread can write it all
     * and then read it back in two reads. */
    unsigned char out[40000], in[40000];
    for (size_t i = 0; i < sizeof(out); i++)
        out[i] = (unsigned char)(i * 31 + 7);
    assert_int_equal(bc_write_all(fds[1], out, sizeof(out)), BC_OK);
    assert_int_equal(bc_write_all(fds[1], out, 0), BC_OK);
    assert_int_equal(bc_read_all(fds[0], in, 1000), BC_OK);
    assert_int_equal(bc_read_all(fds[0], in + 1000, sizeof(in) - 1000), BC_OK);
    assert_memory_equal(in, out, sizeof(out));
    /* The writer closes after 3 bytes: a read of 5 is truncated. */
    assert_int_equal(bc_write_all(fds[1], "abc", 3), BC_OK);
    close(fds[1]);
    errno = 12345;
    assert_int_equal(bc_read_all(fds[0], in, 5), BC_ERR_TRUNCATED);
    assert_int_equal(errno, 12345); /* untouched */
    assert_int_equal(bc_read_all(fds[0], in, 0), BC_OK);
    close(fds[0]);
    /* A closed descriptor: BC_ERR_IO with errno set. */
    errno = 0;
    assert_int_equal(bc_read_all(fds[0], in, 1), BC_ERR_IO);
    assert_int_equal(errno, EBADF);
    errno = 0;
    assert_int_equal(bc_write_all(fds[1], out, 1), BC_ERR_IO);
    assert_int_equal(errno, EBADF);
}

static void test_io_file(void **state)
{
    (void)state;
    char path[] = "/tmp/bc_test_common_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    size_t n = 3 * 1000 * 1000; /* several write(2) calls' worth */
    unsigned char *out = malloc(n), *in = malloc(n + 1);
    assert_non_null(out);
    assert_non_null(in);
    for (size_t i = 0; i < n; i++)
        out[i] = (unsigned char)(i ^ (i >> 8));
    assert_int_equal(bc_write_all(fd, out, n), BC_OK);
    assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
    assert_int_equal(bc_read_all(fd, in, n), BC_OK);
    assert_memory_equal(in, out, n);
    /* At end of file: a short read is truncated. */
    assert_int_equal(lseek(fd, (off_t)n - 10, SEEK_SET), (off_t)n - 10);
    assert_int_equal(bc_read_all(fd, in, 11), BC_ERR_TRUNCATED);
    assert_memory_equal(in, out + n - 10, 10); /* what there was is read */
    assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
    assert_int_equal(bc_read_all(fd, in, n + 1), BC_ERR_TRUNCATED);
    free(out);
    free(in);
    close(fd);
}

/* bc_write_all_count(): the bytes written, all of them, none (a full
 * device) or those before the write that failed (a full non-blocking
 * pipe: the first write(2) fills it, the next fails with EAGAIN). */
static void test_io_write_count(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    size_t n = 1 << 20; /* more than a pipe holds (64 KiB by default) */
    unsigned char *out = malloc(n), *in = malloc(n);
    assert_non_null(out);
    assert_non_null(in);
    for (size_t i = 0; i < n; i++)
        out[i] = (unsigned char)(i * 13 + 5);
    size_t written = 12345;
    assert_int_equal(bc_write_all_count(fds[1], out, 1000, &written), BC_OK);
    assert_int_equal(written, 1000);
    assert_int_equal(bc_read_all(fds[0], in, 1000), BC_OK);
    assert_memory_equal(in, out, 1000);
    assert_int_equal(bc_write_all_count(fds[1], out, 0, &written), BC_OK);
    assert_int_equal(written, 0);
    /* Cut short: written counts what the pipe took, which is out's head. */
    int fl = fcntl(fds[1], F_GETFL);
    assert_int_equal(fcntl(fds[1], F_SETFL, fl | O_NONBLOCK), 0);
    errno = 0;
    assert_int_equal(bc_write_all_count(fds[1], out, n, &written), BC_ERR_IO);
    assert_int_equal(errno, EAGAIN);
    assert_true(written > 0 && written < n);
    close(fds[1]);
    assert_int_equal(bc_read_all(fds[0], in, written), BC_OK);
    assert_memory_equal(in, out, written);
    assert_int_equal(bc_read_all(fds[0], in, 1), BC_ERR_TRUNCATED);
    close(fds[0]);
    /* A device that takes nothing: 0 written, errno its reason. */
    int full = open("/dev/full", O_WRONLY);
    if (full >= 0) {
        written = 12345;
        errno = 0;
        assert_int_equal(bc_write_all_count(full, out, 10, &written),
                         BC_ERR_IO);
        assert_int_equal(errno, ENOSPC);
        assert_int_equal(written, 0);
        assert_int_equal(bc_write_all_count(full, out, 10, NULL), BC_ERR_IO);
        close(full);
    }
    free(out);
    free(in);
}

/* ---- bc_bigarray ---- */

static bool all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

static void test_bigarray(void **state)
{
    (void)state;
    const size_t sizes[] = {1,
                            63,
                            64,
                            65,
                            4096,
                            BC_BIGARRAY_HUGE - 1,
                            BC_BIGARRAY_HUGE,
                            BC_BIGARRAY_HUGE + 1,
                            3 * BC_BIGARRAY_HUGE + 12345};
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        struct bc_bigarray a;
        assert_true(bc_bigarray_alloc(&a, sizes[s]));
        assert_non_null(a.p);
        assert_int_equal(a.bytes, sizes[s]);
        assert_int_equal((uintptr_t)a.p % 64, 0);
        assert_int_equal(a.mmapped, sizes[s] >= BC_BIGARRAY_HUGE);
        assert_true(all_zero(a.p, a.bytes));
        memset(a.p, 0xff, a.bytes); /* all of it is ours */
        bc_bigarray_free(&a);
        assert_null(a.p);
        assert_int_equal(a.bytes, 0);
        assert_false(a.mmapped);
        bc_bigarray_free(&a); /* an empty one: no-op */
    }
    /* Zero bytes and an impossible size: false, left empty. */
    struct bc_bigarray a = {(void *)&a, 7, true};
    assert_false(bc_bigarray_alloc(&a, 0));
    assert_null(a.p);
    assert_int_equal(a.bytes, 0);
    assert_false(bc_bigarray_alloc(&a, SIZE_MAX));
    assert_null(a.p);
    bc_bigarray_free(&a);
    struct bc_bigarray z = {0};
    bc_bigarray_free(&z);
    assert_null(z.p);
}

/* ---- counter accessors ---- */

struct all_types {
    uint64_t u64[2];
    size_t size[2];
    unsigned uint[2];
    int sint[2];
    bool flag[2];
    double dbl[2];
};

#define ROW(field, t)                                                          \
    {                                                                          \
#field, BC_COUNTER_TOTAL, t, "things", "a test counter",               \
            offsetof(struct all_types, field), 2, NULL, NULL, NULL, false      \
    }

static const struct bc_counter rows[] = {
    ROW(u64, BC_COUNTER_U64),   ROW(size, BC_COUNTER_SIZE),
    ROW(uint, BC_COUNTER_UINT), ROW(sint, BC_COUNTER_INT),
    ROW(flag, BC_COUNTER_BOOL), ROW(dbl, BC_COUNTER_DOUBLE),
};

static void test_counter_types(void **state)
{
    (void)state;
    /* Every type, element 1 of 2 (the stride is the type's size), read
     * back as set; element 0 untouched. */
    for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
        struct all_types s;
        memset(&s, 0, sizeof(s));
        bc_counter_set(&rows[r], &s, 1, 12345);
        uint64_t want = rows[r].type == BC_COUNTER_BOOL ? 1 : 12345;
        assert_int_equal(bc_counter_u64(&rows[r], &s, 1), want);
        assert_true(bc_counter_value(&rows[r], &s, 1) == (double)want);
        assert_int_equal(bc_counter_u64(&rows[r], &s, 0), 0);
        assert_true(bc_counter_value(&rows[r], &s, 0) == 0.0);
    }
    struct all_types s;
    memset(&s, 0, sizeof(s));
    assert_int_equal(s.u64[1], 0);
    bc_counter_set(&rows[0], &s, 1, 7);
    assert_int_equal(s.u64[1], 7);
    bc_counter_set(&rows[1], &s, 1, 8);
    assert_int_equal(s.size[1], 8);
    bc_counter_set(&rows[2], &s, 1, 9);
    assert_int_equal(s.uint[1], 9);
    bc_counter_set(&rows[3], &s, 1, 10);
    assert_int_equal(s.sint[1], 10);
    bc_counter_set(&rows[4], &s, 1, 11);
    assert_true(s.flag[1]);
    bc_counter_set(&rows[4], &s, 1, 0);
    assert_false(s.flag[1]);
    bc_counter_set(&rows[5], &s, 1, 12);
    assert_true(s.dbl[1] == 12.0);

    /* As an integer: exact for every integer type, including values a
     * double cannot hold (above 2^53). */
    s.u64[0] = UINT64_MAX;
    assert_true(bc_counter_u64(&rows[0], &s, 0) == UINT64_MAX);
    s.size[0] = SIZE_MAX;
    assert_true(bc_counter_u64(&rows[1], &s, 0) == (uint64_t)SIZE_MAX);
    s.size[0] = ((size_t)1 << 53) + 1;
    assert_true(bc_counter_u64(&rows[1], &s, 0) == ((uint64_t)1 << 53) + 1);
    s.uint[0] = UINT32_MAX;
    assert_true(bc_counter_u64(&rows[2], &s, 0) == UINT32_MAX);
    /* A negative int is 0; a double is truncated, negative 0, too large
     * the largest. */
    s.sint[0] = -5;
    assert_int_equal(bc_counter_u64(&rows[3], &s, 0), 0);
    assert_true(bc_counter_value(&rows[3], &s, 0) == -5.0);
    s.dbl[0] = 2.75;
    assert_int_equal(bc_counter_u64(&rows[5], &s, 0), 2);
    assert_true(bc_counter_value(&rows[5], &s, 0) == 2.75);
    s.dbl[0] = -1.5;
    assert_int_equal(bc_counter_u64(&rows[5], &s, 0), 0);
    s.dbl[0] = 1e30;
    assert_true(bc_counter_u64(&rows[5], &s, 0) == UINT64_MAX);
    /* A u64 round trip above 2^53 through set. */
    bc_counter_set(&rows[0], &s, 0, ((uint64_t)1 << 60) + 3);
    assert_true(bc_counter_u64(&rows[0], &s, 0) == ((uint64_t)1 << 60) + 3);
    bc_counter_set(&rows[1], &s, 0, ((uint64_t)1 << 60) + 3);
    assert_true(bc_counter_u64(&rows[1], &s, 0) == ((uint64_t)1 << 60) + 3);

    assert_string_equal(bc_counter_kind_name(BC_COUNTER_TOTAL), "total");
    assert_string_equal(bc_counter_kind_name(BC_COUNTER_RUN_TOTAL),
                        "run_total");
    assert_string_equal(bc_counter_kind_name(BC_COUNTER_GAUGE), "gauge");
}

/* ---- status texts ---- */

static void test_strerror(void **state)
{
    (void)state;
    /* Every status has its own text, none the fallback. */
    for (int s = BC_OK; s <= BC_ERR_UNSUPPORTED; s++) {
        const char *t = bc_strerror((enum bc_status)s);
        assert_non_null(t);
        assert_string_not_equal(t, "unknown status");
        for (int o = BC_OK; o < s; o++)
            assert_string_not_equal(t, bc_strerror((enum bc_status)o));
    }
    assert_string_equal(bc_strerror(BC_OK), "success");
    assert_string_equal(bc_strerror(BC_ERR_UNSUPPORTED),
                        "not supported by this object");
    assert_string_equal(bc_strerror((enum bc_status)(BC_ERR_UNSUPPORTED + 1)),
                        "unknown status");
}

/* ---- bc_clock ---- */

/* The wall clock is the epoch's (within a second of time()), the
 * monotonic one never goes back and moves with a sleep. */
static void test_clocks(void **state)
{
    (void)state;
    uint64_t t = (uint64_t)time(NULL) * 1000u;
    uint64_t w = bc_wall_ms();
    assert_true(w + 2000 >= t && w <= t + 2000);
    uint64_t a = bc_mono_ms();
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    uint64_t b = bc_mono_ms();
    assert_true(b >= a + 19);
    assert_true(b < a + 5000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buf_growth),
        cmocka_unit_test(test_buf_cap),
        cmocka_unit_test(test_buf_printf_putc_puts),
        cmocka_unit_test(test_buf_clear_detach),
        cmocka_unit_test(test_buf_room_truncate),
        cmocka_unit_test(test_buf_room_small_cap),
        cmocka_unit_test(test_hex),
        cmocka_unit_test(test_io_pipe),
        cmocka_unit_test(test_io_file),
        cmocka_unit_test(test_io_write_count),
        cmocka_unit_test(test_clocks),
        cmocka_unit_test(test_bigarray),
        cmocka_unit_test(test_counter_types),
        cmocka_unit_test(test_strerror),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
