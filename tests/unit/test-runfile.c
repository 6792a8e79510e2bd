/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of run files (src/runfile.h): a stream written in pieces reads
 * back byte for byte; the bound and its note; a file left without its frame
 * end (a killed baton) or empty reads as an early end; damage keeps what
 * came before it and is told; only regular files are read (no link, no
 * FIFO that would block); plain files of older runs are copied as they are.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "runfile.h"
#include "unit-fs.h"
#include "util.h"

struct fixture {
    char dir[64];
};

static int setup(void **state)
{
    struct fixture *f = bt_xcalloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "%s", "/tmp/bt-runfile-XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    bt_unit_rm_rf(f->dir);
    free(f);
    return 0;
}

/* cp from to, for a snapshot of a file being written. */
static void copy_file(const char *from, const char *to)
{
    size_t n;
    char *data = bt_read_file(from, &n);
    assert_non_null(data);
    int fd = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, data, n), (ssize_t)n);
    close(fd);
    free(data);
}

static char *at(const struct fixture *f, const char *name)
{
    return bt_xasprintf("%s/%s", f->dir, name);
}

/* n bytes of lines of pseudo-random letters: compressible, but not so
 * much that a spot in the file is not a spot in the stream. */
static char *stream(size_t n)
{
    char *s = bt_xmalloc(n + 1);
    uint32_t x = 12345;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        s[i] = "abcdefghijklmnopqrstuvwxyz"[(x >> 16) % 26];
        if (i % 61 == 60)
            s[i] = '\n';
    }
    s[n] = '\0';
    return s;
}

static void write_in_pieces(const char *path, const char *data, size_t n, uint64_t max)
{
    struct bt_runfile *f = NULL;
    assert_int_equal(bt_runfile_create(path, max, &f), 0);
    for (size_t at_ = 0, step = 1; at_ < n; at_ += step, step = step * 3 + 1) {
        size_t k = n - at_ < step ? n - at_ : step;
        assert_int_equal(bt_runfile_write(f, data + at_, k), 0);
    }
    assert_int_equal(bt_runfile_close(f), 0);
}

static void test_round_trip(void **state)
{
    struct fixture *f = *state;
    char *path = at(f, "a.out.zst");
    size_t n = (size_t)3 * 1000 * 1000;
    char *data = stream(n);
    write_in_pieces(path, data, n, UINT64_MAX);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_true((size_t)st.st_size < n * 7 / 10);
    struct bt_buf got = BT_BUF_INIT;
    int truncated = 1;
    assert_int_equal(bt_runfile_read(path, &got, &truncated), 0);
    assert_int_equal(truncated, 0);
    assert_int_equal(got.len, n);
    assert_memory_equal(got.data, data, n);
    bt_buf_release(&got);
    free(data);
    free(path);
}

static void test_bound_and_note(void **state)
{
    struct fixture *f = *state;
    char *path = at(f, "b.out.zst");
    char *data = stream(10000);
    write_in_pieces(path, data, 10000, 4000);
    struct bt_buf got = BT_BUF_INIT;
    assert_int_equal(bt_runfile_read(path, &got, NULL), 0);
    assert_int_equal(got.len, 4000 + strlen(BT_RUNFILE_NOTE));
    assert_memory_equal(got.data, data, 4000);
    assert_memory_equal(got.data + 4000, BT_RUNFILE_NOTE, strlen(BT_RUNFILE_NOTE));
    bt_buf_release(&got);
    free(data);
    free(path);
}

/* What a SIGKILL leaves: every write so far, without the frame's end. */
static void test_no_frame_end(void **state)
{
    struct fixture *f = *state;
    char *path = at(f, "c.out.zst");
    char *data = stream(200000);
    struct bt_runfile *rf = NULL;
    assert_int_equal(bt_runfile_create(path, UINT64_MAX, &rf), 0);
    assert_int_equal(bt_runfile_write(rf, data, 150000), 0);
    /* the file as a killed baton leaves it: copy it before the end */
    char *copy = at(f, "copy.out.zst");
    copy_file(path, copy);
    assert_int_equal(bt_runfile_close(rf), 0);
    struct bt_buf got = BT_BUF_INIT;
    int truncated = 0;
    assert_int_equal(bt_runfile_read(copy, &got, &truncated), 0);
    assert_int_equal(truncated, 1);
    assert_int_equal(got.len, 150000);
    assert_memory_equal(got.data, data, 150000);
    bt_buf_release(&got);

    /* created, nothing written yet: an early end too */
    char *empty = at(f, "empty.out.zst");
    int fd = open(empty, O_WRONLY | O_CREAT, 0600);
    close(fd);
    truncated = 0;
    assert_int_equal(bt_runfile_read(empty, &got, &truncated), 0);
    assert_int_equal(truncated, 1);
    assert_int_equal(got.len, 0);
    bt_buf_release(&got);
    free(empty);
    free(copy);
    free(data);
    free(path);
}

static void flip_byte(const char *path, double where)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    int fd = open(path, O_RDWR);
    off_t off = (off_t)((double)st.st_size * where);
    unsigned char c;
    assert_int_equal(pread(fd, &c, 1, off), 1);
    c ^= 0x5a;
    assert_int_equal(pwrite(fd, &c, 1, off), 1);
    close(fd);
}

/* Damage: the blocks before it come back, and the read says so; at the very
 * end the checksum catches what decoding alone would not. */
static void test_damage(void **state)
{
    struct fixture *f = *state;
    size_t n = (size_t)2 * 1000 * 1000;
    char *data = stream(n);
    double spots[] = {0.5, 0.999};
    for (size_t i = 0; i < 2; i++) {
        char *path = bt_xasprintf("%s/d%zu.out.zst", f->dir, i);
        write_in_pieces(path, data, n, UINT64_MAX);
        flip_byte(path, spots[i]);
        struct bt_buf got = BT_BUF_INIT;
        assert_int_equal(bt_runfile_read(path, &got, NULL), BT_ECORRUPT);
        assert_true(got.len <= n);
        if (i == 0) /* what came before the damaged block is kept */
            assert_true(got.len > n / 4);
        assert_memory_equal(got.data, data, got.len > n / 4 ? n / 4 : got.len);
        bt_buf_release(&got);
        free(path);
    }
    /* a partial magic number is no frame */
    char *bad = at(f, "bad.out.zst");
    int fd = open(bad, O_WRONLY | O_CREAT, 0600);
    assert_int_equal(write(fd, "\x28\xb5\x2f", 3), 3);
    close(fd);
    struct bt_buf got = BT_BUF_INIT;
    int truncated = 0;
    int rc = bt_runfile_read(bad, &got, &truncated);
    assert_true(rc == BT_ECORRUPT || (rc == 0 && truncated == 1));
    assert_int_equal(got.len, 0);
    bt_buf_release(&got);
    free(bad);
    free(data);
}

static void test_only_regular_files(void **state)
{
    struct fixture *f = *state;
    char *fifo = at(f, "fifo.out.zst");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    struct bt_buf got = BT_BUF_INIT;
    assert_int_equal(bt_runfile_read(fifo, &got, NULL), -EINVAL); /* does not block */
    char *target = at(f, "t.out.zst"), *link = at(f, "l.out.zst");
    char *data = stream(1000);
    write_in_pieces(target, data, 1000, UINT64_MAX);
    assert_int_equal(symlink(target, link), 0);
    assert_int_equal(bt_runfile_read(link, &got, NULL), -EINVAL);
    char *dir = at(f, "dir.out.zst");
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_int_equal(bt_runfile_read(dir, &got, NULL), -EINVAL);
    char *missing = at(f, "missing.out.zst");
    assert_int_equal(bt_runfile_read(missing, &got, NULL), -ENOENT);
    assert_int_equal(got.len, 0);
    /* creating never follows a link, nor touches anything already there */
    struct bt_runfile *rf = NULL;
    assert_int_equal(bt_runfile_create(link, 100, &rf), -EEXIST);
    assert_null(rf);
    assert_int_equal(bt_runfile_create(target, 100, &rf), -EEXIST);
    assert_int_equal(bt_runfile_read(target, &got, NULL), 0);
    assert_int_equal(got.len, 1000); /* not truncated */
    bt_buf_reset(&got);
    assert_int_equal(bt_runfile_create(fifo, 100, &rf), -EEXIST); /* no wait for a reader */
    assert_int_equal(bt_runfile_create(dir, 100, &rf), -EEXIST);
    bt_buf_release(&got);
    free(missing);
    free(dir);
    free(data);
    free(link);
    free(target);
    free(fifo);
}

/* A run of an older baton: runs/<run>.out, plain. */
static void test_plain_file(void **state)
{
    struct fixture *f = *state;
    char *path = at(f, "old.out");
    int fd = open(path, O_WRONLY | O_CREAT, 0600);
    assert_int_equal(write(fd, "{\"a\":1}\n", 8), 8);
    close(fd);
    struct bt_buf got = BT_BUF_INIT;
    int truncated = 1;
    assert_int_equal(bt_runfile_read(path, &got, &truncated), 0);
    assert_int_equal(truncated, 0);
    assert_int_equal(got.len, 8);
    assert_memory_equal(got.data, "{\"a\":1}\n", 8);
    bt_buf_release(&got);
    free(path);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_round_trip), T(test_bound_and_note),     T(test_no_frame_end),
        T(test_damage),     T(test_only_regular_files), T(test_plain_file),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
