/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the coder registry and of finding what to run for a coder
 * (src/coder.h): npm's codex
 * launcher seen through to its native binary the way bin/codex.js of
 * @openai/codex 0.171.0 finds it, the fallbacks to the launcher, the
 * environment changes; and the store's coder versions kept by executable
 * identity (store.h, "coder versions"). Package trees are made in a fresh
 * directory per test.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "coder.h"
#include "error.h"
#include "store.h"
#include "unit-fs.h"
#include "util.h"

struct fixture {
    char dir[64];
    char *real; /* realpath of dir */
};

static int setup(void **state)
{
    struct fixture *f = bt_xcalloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "%s", "/tmp/bt-coder-XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    f->real = realpath(f->dir, NULL);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    bt_unit_rm_rf(f->dir);
    free(f->real);
    free(f);
    unsetenv("BATON_CODEX_BIN");
    return 0;
}

/* mkdir -p of dir/rel's parent, then the file with text and mode. */
static void put(const struct fixture *f, const char *rel, const char *text, mode_t mode)
{
    char *path = bt_xasprintf("%s/%s", f->real, rel);
    for (char *p = path + strlen(f->real) + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        mkdir(path, 0700);
        *p = '/';
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    chmod(path, mode);
    free(path);
}

static char *at(const struct fixture *f, const char *rel)
{
    return bt_xasprintf("%s/%s", f->real, rel);
}

/* The platform package and triple the launcher would pick, or skip. */
static int platform(const char **pkg, const char **triple)
{
    struct utsname u;
    uname(&u);
    if (strcmp(u.machine, "x86_64") == 0) {
        *pkg = "codex-linux-x64";
        *triple = "x86_64-unknown-linux-musl";
        return 1;
    }
    if (strcmp(u.machine, "aarch64") == 0) {
        *pkg = "codex-linux-arm64";
        *triple = "aarch64-unknown-linux-musl";
        return 1;
    }
    return 0;
}

#define CODEX_PKG "{\n  \"name\": \"@openai/codex\",\n  \"version\": \"0.171.0\"\n}\n"

/* An npm prefix as `npm install @openai/codex` leaves it: the launcher
 * package, its .bin link, and (with_platform) the platform package. */
static void npm_tree(const struct fixture *f, int with_platform, int with_binary)
{
    const char *pkg = NULL, *triple = NULL;
    if (!platform(&pkg, &triple))
        skip();
    put(f, "p/node_modules/@openai/codex/package.json", CODEX_PKG, 0644);
    put(f, "p/node_modules/@openai/codex/bin/codex.js", "#!/usr/bin/env node\n", 0755);
    char *bin = at(f, "p/node_modules/.bin");
    mkdir(bin, 0700);
    char *link = bt_xasprintf("%s/codex", bin);
    assert_int_equal(symlink("../@openai/codex/bin/codex.js", link), 0);
    if (with_platform) {
        char *pj = bt_xasprintf("p/node_modules/@openai/%s/package.json", pkg);
        put(f, pj, "{\"name\": \"@openai/codex\", \"version\": \"0.171.0-linux-x64\"}\n", 0644);
        free(pj);
    }
    if (with_binary) {
        char *exe = bt_xasprintf("p/node_modules/@openai/%s/vendor/%s/bin/codex", pkg, triple);
        put(f, exe,
            "\x7f"
            "ELF",
            0755);
        free(exe);
    }
    setenv("BATON_CODEX_BIN", link, 1);
    free(link);
    free(bin);
}

static int env_has(const struct bt_strv *env, const char *kv)
{
    for (size_t i = 0; i < env->n; i++)
        if (strcmp(env->v[i], kv) == 0)
            return 1;
    return 0;
}

static void test_npm_launcher(void **state)
{
    struct fixture *f = *state;
    const char *pkg = NULL, *triple = NULL;
    npm_tree(f, 1, 1);
    platform(&pkg, &triple);
    struct bt_coder_exe exe;
    assert_int_equal(bt_coder_resolve(bt_coder_find("codex"), &exe), 0);
    char *want =
        bt_xasprintf("%s/p/node_modules/@openai/%s/vendor/%s/bin/codex", f->real, pkg, triple);
    char *launcher = at(f, "p/node_modules/@openai/codex/bin/codex.js");
    assert_string_equal(exe.path, want);
    assert_string_equal(exe.launcher, launcher);
    char *root =
        bt_xasprintf("CODEX_MANAGED_PACKAGE_ROOT=%s/p/node_modules/@openai/codex", f->real);
    assert_true(env_has(&exe.env, root));
    assert_true(env_has(&exe.env, "CODEX_MANAGED_BY_NPM=1"));
    assert_true(env_has(&exe.env, "CODEX_MANAGED_BY_BUN")); /* unset */

    /* what the coder gets: the launcher's changes over baton's, the run
     * tag last; stale CODEX_MANAGED_BY_* of the caller are gone */
    char *base[] = {"PATH=/bin", "CODEX_MANAGED_BY_BUN=1", "BATON_RUN=old", NULL};
    struct bt_strv out;
    bt_coder_env(&exe, base, "BATON_RUN=r1", &out);
    assert_int_equal(out.n, 4);
    assert_string_equal(out.v[0], "PATH=/bin");
    assert_string_equal(out.v[1], root);
    assert_string_equal(out.v[2], "CODEX_MANAGED_BY_NPM=1");
    assert_string_equal(out.v[3], "BATON_RUN=r1");
    assert_null(out.v[4]);
    bt_strv_release(&out);
    free(root);
    free(launcher);
    free(want);
    bt_coder_exe_release(&exe);
}

/* No platform package: the launcher looks in its own vendor/ directory. */
static void test_vendor_in_package(void **state)
{
    struct fixture *f = *state;
    const char *pkg = NULL, *triple = NULL;
    npm_tree(f, 0, 0);
    platform(&pkg, &triple);
    char *exe_rel = bt_xasprintf("p/node_modules/@openai/codex/vendor/%s/bin/codex", triple);
    put(f, exe_rel, "x", 0755);
    struct bt_coder_exe exe;
    assert_int_equal(bt_coder_resolve(bt_coder_find("codex"), &exe), 0);
    char *want = at(f, exe_rel);
    assert_string_equal(exe.path, want);
    assert_non_null(exe.launcher);
    free(want);
    free(exe_rel);
    bt_coder_exe_release(&exe);
}

/* The cases the launcher would fail on or that are not the launcher: the
 * file found is run as it is, with no environment change. */
static void expect_as_is(const struct fixture *f, const char *rel)
{
    struct bt_coder_exe exe;
    assert_int_equal(bt_coder_resolve(bt_coder_find("codex"), &exe), 0);
    char *want = at(f, rel);
    assert_string_equal(exe.path, want);
    assert_null(exe.launcher);
    assert_int_equal(exe.env.n, 0);
    free(want);
    bt_coder_exe_release(&exe);
}

static void test_platform_package_without_binary(void **state)
{
    struct fixture *f = *state;
    npm_tree(f, 1, 0);
    /* a binary in the package's own vendor/ does not count: require.resolve
     * found the platform package, so the launcher looks only there */
    const char *pkg = NULL, *triple = NULL;
    platform(&pkg, &triple);
    char *exe_rel = bt_xasprintf("p/node_modules/@openai/codex/vendor/%s/bin/codex", triple);
    put(f, exe_rel, "x", 0755);
    free(exe_rel);
    expect_as_is(f, "p/node_modules/@openai/codex/bin/codex.js");
}

static void test_not_the_codex_package(void **state)
{
    struct fixture *f = *state;
    npm_tree(f, 1, 1);
    put(f, "p/node_modules/@openai/codex/package.json", "{\"name\": \"codex-fork\"}\n", 0644);
    expect_as_is(f, "p/node_modules/@openai/codex/bin/codex.js");
}

static void test_plain_executable(void **state)
{
    struct fixture *f = *state;
    put(f, "bin/codex", "#!/bin/sh\n", 0755);
    char *p = at(f, "bin/codex");
    setenv("BATON_CODEX_BIN", p, 1);
    free(p);
    expect_as_is(f, "bin/codex");
}

static void test_pnpm_install(void **state)
{
    struct fixture *f = *state;
    npm_tree(f, 1, 1);
    put(f, "p/node_modules/.modules.yaml", "layoutVersion: 5\n", 0644);
    struct bt_coder_exe exe;
    assert_int_equal(bt_coder_resolve(bt_coder_find("codex"), &exe), 0);
    assert_non_null(exe.launcher);
    assert_true(env_has(&exe.env, "CODEX_MANAGED_BY_PNPM=1"));
    assert_false(env_has(&exe.env, "CODEX_MANAGED_BY_NPM=1"));
    bt_coder_exe_release(&exe);
}

/* A directory is not an executable, whatever its name or mode. */
static void test_directory_is_not_a_coder(void **state)
{
    struct fixture *f = *state;
    char *p = at(f, "codex.js");
    assert_int_equal(mkdir(p, 0755), 0);
    setenv("BATON_CODEX_BIN", p, 1);
    struct bt_coder_exe exe;
    assert_int_equal(bt_coder_resolve(bt_coder_find("codex"), &exe), BT_ENOTINSTALLED);
    bt_coder_exe_release(&exe);
    setenv("BATON_CODEX_BIN", "/usr", 1);
    assert_int_equal(bt_coder_resolve(bt_coder_find("codex"), &exe), BT_ENOTINSTALLED);
    bt_coder_exe_release(&exe);
    free(p);
}

/* package.json is read as JSON: any spacing names the package. */
static void test_package_json_formatting(void **state)
{
    struct fixture *f = *state;
    npm_tree(f, 1, 1);
    put(f, "p/node_modules/@openai/codex/package.json",
        "{\n\t\"version\" : \"0.171.0\",\n\t\"name\"\t:\t\"@openai/codex\"\n}\n", 0644);
    struct bt_coder_exe exe;
    assert_int_equal(bt_coder_resolve(bt_coder_find("codex"), &exe), 0);
    assert_non_null(exe.launcher);
    bt_coder_exe_release(&exe);
    /* not JSON at all: the launcher runs as it is */
    put(f, "p/node_modules/@openai/codex/package.json", "\"name\": \"@openai/codex\"", 0644);
    expect_as_is(f, "p/node_modules/@openai/codex/bin/codex.js");
}

static void test_not_installed(void **state)
{
    struct fixture *f = *state;
    char *p = at(f, "missing/codex");
    setenv("BATON_CODEX_BIN", p, 1);
    free(p);
    struct bt_coder_exe exe;
    assert_int_equal(bt_coder_resolve(bt_coder_find("codex"), &exe), BT_ENOTINSTALLED);
    assert_null(exe.path);
    bt_coder_exe_release(&exe);
}

/* A version is given back only for the same executable: a rewrite (new
 * inode or ctime), a change of size or mtime, another path all miss. */
static void test_version_by_identity(void **state)
{
    struct fixture *f = *state;
    char *home = at(f, "home");
    struct bt_store *s = NULL;
    assert_int_equal(bt_store_open(home, &s, NULL), 0);
    put(f, "bin/pi", "#!/bin/sh\necho 0.73.1\n", 0755);
    char *path = at(f, "bin/pi");
    struct bt_store_exe id;
    char *v = NULL;
    assert_int_equal(bt_store_exe_stat("pi", path, &id), 0);
    assert_int_equal(bt_store_coder_version_get(s, &id, &v), BT_ENOTFOUND);
    assert_null(v);
    assert_int_equal(bt_store_coder_version_put(s, &id, "0.73.1"), 0);
    assert_int_equal(bt_store_coder_version_get(s, &id, &v), 0);
    assert_string_equal(v, "0.73.1");
    free(v);

    /* reinstalled: a new file in its place */
    char *tmp = at(f, "bin/pi.new");
    put(f, "bin/pi.new", "#!/bin/sh\necho 0.73.2\n", 0755);
    assert_int_equal(rename(tmp, path), 0);
    struct bt_store_exe id2;
    assert_int_equal(bt_store_exe_stat("pi", path, &id2), 0);
    assert_int_equal(bt_store_coder_version_get(s, &id2, &v), BT_ENOTFOUND);
    assert_int_equal(bt_store_coder_version_put(s, &id2, "0.73.2"), 0);
    assert_int_equal(bt_store_coder_version_get(s, &id2, &v), 0);
    assert_string_equal(v, "0.73.2");
    free(v);
    /* the old identity is gone with the replaced row */
    assert_int_equal(bt_store_coder_version_get(s, &id, &v), BT_ENOTFOUND);

    /* the same inode changed in place */
    struct bt_store_exe id3 = id2;
    id3.mtime_ns++;
    assert_int_equal(bt_store_coder_version_get(s, &id3, &v), BT_ENOTFOUND);
    id3 = id2;
    id3.size++;
    assert_int_equal(bt_store_coder_version_get(s, &id3, &v), BT_ENOTFOUND);
    id3 = id2;
    id3.path = tmp;
    assert_int_equal(bt_store_coder_version_get(s, &id3, &v), BT_ENOTFOUND);

    /* one file serving two coders: each has its own answer */
    id3 = id2;
    id3.coder = "codex";
    assert_int_equal(bt_store_coder_version_get(s, &id3, &v), BT_ENOTFOUND);
    assert_int_equal(bt_store_coder_version_put(s, &id3, "0.171.0"), 0);
    assert_int_equal(bt_store_coder_version_get(s, &id2, &v), 0);
    assert_string_equal(v, "0.73.2");
    free(v);
    assert_int_equal(bt_store_coder_version_get(s, &id3, &v), 0);
    assert_string_equal(v, "0.171.0");
    free(v);
    /* asked, no answer: stored as such, so it is not asked again */
    assert_int_equal(bt_store_coder_version_put(s, &id3, NULL), 0);
    v = (char *)"x";
    assert_int_equal(bt_store_coder_version_get(s, &id3, &v), 0);
    assert_null(v);

    assert_int_equal(bt_store_exe_stat("pi", tmp, &id3), -ENOENT);
    assert_int_equal(bt_store_coder_version_put(s, &id2, ""), -EINVAL);
    assert_int_equal(bt_store_run_set_version(s, "0mx4nosuchrun00000000", "1.0.0"), BT_ENOTFOUND);
    bt_store_close(s);
    free(tmp);
    free(path);
    free(home);
}

/* The version a coder names reaches its run's record. */
static void test_run_version(void **state)
{
    struct fixture *f = *state;
    char *home = at(f, "home");
    struct bt_store *s = NULL;
    assert_int_equal(bt_store_open(home, &s, NULL), 0);
    char conv[BT_ID_SIZE], run[BT_ID_SIZE];
    struct bt_store_conversation_new cn = {.coder = "codex", .cwd = "/src", .title = "t"};
    assert_int_equal(bt_store_conversation_create(s, &cn, conv), 0);
    struct bt_store_run_new rn = {.conversation = conv, .coder = "codex"};
    assert_int_equal(bt_store_run_create(s, &rn, run, NULL), 0);
    assert_int_equal(bt_store_run_started(s, run, getpid(), getpid(), NULL), 0);
    assert_int_equal(bt_store_run_set_version(s, run, "0.171.0"), 0);
    struct bt_store_run r;
    assert_int_equal(bt_store_run_get(s, run, &r), 0);
    assert_string_equal(r.coder_version, "0.171.0");
    bt_store_run_release(&r);
    bt_store_close(s);
    free(home);
}

/* The registry (src/coders.def): every coder found by its own name, names
 * unique and fit for a directory name, the ops the engine calls without a
 * check present, every env_doc a list of name and sentence pairs. */
static void test_registry(void **state)
{
    (void)state;
    assert_non_null(bt_coders[0]); /* the default coder */
    for (size_t i = 0; bt_coders[i]; i++) {
        const struct bt_coder *c = bt_coders[i];
        assert_non_null(c->name);
        assert_true(c->name[0] &&
                    strspn(c->name, "abcdefghijklmnopqrstuvwxyz0123456789_") == strlen(c->name));
        assert_ptr_equal(bt_coder_find(c->name), c);
        const struct bt_runner_ops *r = c->runner;
        assert_non_null(r);
        assert_true(r->bin_name && r->bin_env && r->parse_version && r->build_argv && r->create &&
                    r->destroy && r->start && r->on_signal && r->interrupt);
        const struct bt_parser_ops *p = c->parser;
        assert_non_null(p);
        assert_true(p->create && p->destroy && p->line);
        for (size_t k = 0; c->env_doc && c->env_doc[k]; k += 2)
            assert_non_null(c->env_doc[k + 1]);
    }
    assert_null(bt_coder_find("no-such-coder"));
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_npm_launcher),
        T(test_vendor_in_package),
        T(test_platform_package_without_binary),
        T(test_not_the_codex_package),
        T(test_plain_executable),
        T(test_pnpm_install),
        T(test_not_installed),
        T(test_directory_is_not_a_coder),
        T(test_package_json_formatting),
        T(test_version_by_identity),
        T(test_run_version),
        cmocka_unit_test(test_registry),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
