/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of baton serve's token file (src/serve/serve-token.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "serve.h"
#include "unit-fs.h"
#include "util.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "%s", "/tmp/bt-token-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    bt_unit_rm_rf(dir);
    return 0;
}

static void write_file(const char *text, mode_t mode)
{
    char *path = bt_xasprintf("%s/serve.token", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    assert_int_equal(chmod(path, mode), 0);
    free(path);
}

/* Made once, 0600, 64 hex digits; read back the same afterwards. */
static void test_made_then_kept(void **state)
{
    (void)state;
    char a[BT_SERVE_TOKEN_HEX + 1], b[BT_SERVE_TOKEN_HEX + 1];
    char *why = NULL;
    assert_int_equal(bt_serve_token(dir, a, &why), 0);
    assert_null(why);
    assert_int_equal(strlen(a), BT_SERVE_TOKEN_HEX);
    assert_int_equal(strspn(a, "0123456789abcdef"), BT_SERVE_TOKEN_HEX);
    struct stat st;
    char *path = bt_xasprintf("%s/serve.token", dir);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    free(path);
    assert_int_equal(bt_serve_token(dir, b, &why), 0);
    assert_string_equal(a, b);
    assert_int_equal(bt_serve_token_equal(a, b), 1);
    b[10] = b[10] == 'a' ? 'b' : 'a';
    assert_int_equal(bt_serve_token_equal(b, a), 0);
    assert_int_equal(bt_serve_token_equal("", a), 0);
    assert_int_equal(bt_serve_token_equal(NULL, a), 0);
    char longer[BT_SERVE_TOKEN_HEX + 2];
    snprintf(longer, sizeof longer, "%sx", a);
    assert_int_equal(bt_serve_token_equal(longer, a), 0);
}

/* A file others can read, or one that holds no token, is refused with why. */
static void test_refused(void **state)
{
    (void)state;
    char t[BT_SERVE_TOKEN_HEX + 1];
    char *why = NULL;
    char good[BT_SERVE_TOKEN_HEX + 2];
    memset(good, 'a', BT_SERVE_TOKEN_HEX);
    good[BT_SERVE_TOKEN_HEX] = '\n';
    good[BT_SERVE_TOKEN_HEX + 1] = '\0';
    write_file(good, 0644);
    assert_true(bt_serve_token(dir, t, &why) < 0);
    assert_non_null(strstr(why, "can be read by others"));
    free(why);
    why = NULL;
    write_file("not a token\n", 0600);
    assert_true(bt_serve_token(dir, t, &why) < 0);
    assert_non_null(strstr(why, "does not hold a token"));
    free(why);
    why = NULL;
    write_file(good, 0600);
    assert_int_equal(bt_serve_token(dir, t, &why), 0);
    assert_int_equal(strspn(t, "a"), BT_SERVE_TOKEN_HEX);
}

/* Servers starting at the same moment on a new home: each gets the token,
 * the same one, none reads a file half written, nothing is left aside. */
static void test_made_at_once(void **state)
{
    (void)state;
    enum { N = 8 };
    int fds[N][2];
    pid_t pids[N];
    for (int i = 0; i < N; i++) {
        assert_int_equal(pipe(fds[i]), 0);
        pids[i] = fork();
        assert_true(pids[i] >= 0);
        if (pids[i] == 0) {
            char t[BT_SERVE_TOKEN_HEX + 1] = "";
            char *why = NULL;
            int rc = bt_serve_token(dir, t, &why);
            dprintf(fds[i][1], "%d %s %s", rc, rc ? "-" : t, why ? why : "-");
            _exit(0);
        }
        close(fds[i][1]);
    }
    char first[BT_SERVE_TOKEN_HEX + 1] = "";
    for (int i = 0; i < N; i++) {
        char out[512] = "";
        ssize_t n = read(fds[i][0], out, sizeof out - 1);
        close(fds[i][0]);
        int status = 0;
        assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
        assert_true(n > 0);
        /* "RC TOKEN WHY": RC 0 and the token, or why not */
        char t[BT_SERVE_TOKEN_HEX + 1] = "";
        if (strncmp(out, "0 ", 2) != 0)
            fail_msg("server %d: %s", i, out);
        memcpy(t, out + 2, BT_SERVE_TOKEN_HEX);
        if (!first[0])
            memcpy(first, t, sizeof first);
        assert_string_equal(t, first);
    }
    DIR *d = opendir(dir);
    assert_non_null(d);
    int files = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.')
            files++;
    closedir(d);
    assert_int_equal(files, 1); /* serve.token alone */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_made_then_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_made_at_once, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
