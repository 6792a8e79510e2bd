/* SPDX-License-Identifier: MIT */
/*
 * integration tests of what a turn costs beyond the coder: one coder process
 * per turn (the version comes from the coder's protocol or from the store,
 * probed once per executable), npm's codex launcher seen through to the
 * binary it would start, and the bounded, compressed run files. The coder is
 * tests/fake-coder behind a small sh wrapper that logs each start.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "harness.h"
#include "runfile.h"
#include "support.h"

#define PI_FIXTURES BT_SOURCE_DIR "/fixtures/pi/0.73.1"

/* Write an executable sh script at path that appends "$0|$*|<managed>"
 * to log and execs the fake coder. */
static void wrapper(const char *path, const char *log)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f,
            "#!/bin/sh\n"
            "printf '%%s|%%s|%%s\\n' \"$0\" \"$*\" \"${CODEX_MANAGED_BY_NPM:-}\" >> '%s'\n"
            "exec '%s' \"$@\"\n",
            log, FAKE);
    fclose(f);
    assert_int_equal(chmod(path, 0755), 0);
}

/* mkdir -p path (0700). */
static void mkdir_p(const char *path)
{
    char *p = bt_xstrdup(path);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        mkdir(p, 0700);
        *s = '/';
    }
    mkdir(p, 0700);
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    free(p);
}

/* Lines of the start log holding needle. */
static int starts(const char *log, const char *needle)
{
    char *text = bt_test_slurp(log, NULL);
    int n = 0;
    for (char *p = text; p && (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    free(text);
    return n;
}

/* The coder_version of the turn.started of a --json stream ("null" if
 * null); caller frees. */
static char *started_version(const char *out)
{
    cJSON **lines;
    size_t n = bt_test_json_lines(out, &lines);
    assert_true(n >= 2);
    const cJSON *v = cJSON_GetObjectItem(lines[0], "coder_version");
    char *s = bt_xstrdup(cJSON_IsString(v) ? v->valuestring : "null");
    bt_test_lines_free(lines, n);
    return s;
}

/* Make the fake coder replay the codex text recording without the
 * userAgent member of its initialize answer: a codex that names no
 * version. */
static void replay_without_user_agent(struct ctx *c)
{
    size_t len;
    char *rec = bt_test_slurp(FIXTURES "/text.jsonl", &len);
    assert_non_null(rec);
    char *ua = strstr(rec, "\"userAgent\":\"");
    assert_non_null(ua);
    char *end = strstr(ua + 13, "\",");
    assert_non_null(end);
    memmove(ua, end + 2, strlen(end + 2) + 1);
    char *path = path_in(c, "silent.jsonl");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(rec, f);
    fclose(f);
    char *kv = bt_xasprintf("FAKE_CODER_REPLAY=%s", path);
    setenv_kv(c, kv);
    free(kv);
    free(path);
    free(rec);
}

/* pi names no version in its rpc protocol: the first turn probes once, the
 * next turns start pi alone; a reinstalled pi is probed again. */
static void test_pi_probed_once(void **state)
{
    struct ctx *c = *state;
    char *bin = path_in(c, "pi"), *log = path_in(c, "starts.log");
    wrapper(bin, log);
    char *kv = bt_xasprintf("BATON_PI_BIN=%s", bin);
    setenv_kv(c, kv);
    char *agent = bt_xasprintf("PI_CODING_AGENT_DIR=%s/pi-agent", c->dir);
    setenv_kv(c, agent);
    setenv_kv(c, "FAKE_CODER_REPLAY=" PI_FIXTURES "/text.jsonl");
    setenv_kv(c, "FAKE_CODER_VERSION=0.73.1");

    struct bt_test_result res;
    baton(c, &res, NULL, 0, "run", "-c", "pi", "--json", "one", END);
    assert_int_equal(res.exit_code, 0);
    char *v = started_version(res.out.data);
    assert_string_equal(v, "0.73.1");
    free(v);
    char *conv = conversation_of(res.out.data);
    bt_test_result_release(&res);
    assert_int_equal(starts(log, "|--version|"), 1);
    assert_int_equal(starts(log, "--mode rpc"), 1);

    for (int i = 0; i < 2; i++) {
        baton(c, &res, NULL, 0, "send", "--json", conv, "again", END);
        assert_int_equal(res.exit_code, 0);
        v = started_version(res.out.data);
        assert_string_equal(v, "0.73.1");
        free(v);
        bt_test_result_release(&res);
    }
    assert_int_equal(starts(log, "|--version|"), 1);
    assert_int_equal(starts(log, "--mode rpc"), 3);

    /* an upgrade: a new file in its place, another version */
    char *tmp = path_in(c, "pi.new");
    wrapper(tmp, log);
    assert_int_equal(rename(tmp, bin), 0);
    setenv_kv(c, "FAKE_CODER_VERSION=0.73.2");
    baton(c, &res, NULL, 0, "send", "--json", conv, "upgraded", END);
    assert_int_equal(res.exit_code, 0);
    v = started_version(res.out.data);
    assert_string_equal(v, "0.73.2");
    free(v);
    bt_test_result_release(&res);
    assert_int_equal(starts(log, "|--version|"), 2);
    free(tmp);
    free(conv);
    free(agent);
    free(kv);
    free(log);
    free(bin);
}

/* codex names its version in initialize's answer: it is never probed. The
 * first turn's turn.started cannot know it yet; the run's record has it,
 * and so has every later turn.started. */
static void test_codex_never_probed(void **state)
{
    struct ctx *c = *state;
    char *bin = path_in(c, "codex"), *log = path_in(c, "starts.log");
    wrapper(bin, log);
    char *kv = bt_xasprintf("BATON_CODEX_BIN=%s", bin);
    setenv_kv(c, kv);
    replay(c, "text");

    struct bt_test_result res;
    baton(c, &res, NULL, 0, "run", "--json", "one", END);
    assert_int_equal(res.exit_code, 0);
    char *v = started_version(res.out.data);
    assert_string_equal(v, "null");
    free(v);
    char *conv = conversation_of(res.out.data);
    bt_test_result_release(&res);

    baton(c, &res, NULL, 0, "show", "--debug", conv, END);
    assert_int_equal(res.exit_code, 0);
    assert_non_null(strstr(res.out.data, "codex 0.171.0"));
    bt_test_result_release(&res);

    baton(c, &res, NULL, 0, "send", "--json", conv, "two", END);
    assert_int_equal(res.exit_code, 0);
    v = started_version(res.out.data);
    assert_string_equal(v, "0.171.0");
    free(v);
    bt_test_result_release(&res);
    assert_int_equal(starts(log, "|--version|"), 0);
    assert_int_equal(starts(log, "app-server"), 2);
    free(conv);
    free(kv);
    free(log);
    free(bin);
}

/* A codex that does not name its version (no userAgent in its initialize
 * answer) is probed once, after its first turn, and not again. */
static void test_codex_silent_version_probed_after(void **state)
{
    struct ctx *c = *state;
    char *bin = path_in(c, "codex"), *log = path_in(c, "starts.log");
    wrapper(bin, log);
    char *kv = bt_xasprintf("BATON_CODEX_BIN=%s", bin);
    setenv_kv(c, kv);
    replay_without_user_agent(c);

    struct bt_test_result res;
    baton(c, &res, NULL, 0, "run", "--json", "one", END);
    assert_int_equal(res.exit_code, 0);
    char *conv = conversation_of(res.out.data);
    bt_test_result_release(&res);
    assert_int_equal(starts(log, "|--version|"), 1);
    baton(c, &res, NULL, 0, "show", "--debug", conv, END);
    assert_non_null(strstr(res.out.data, "codex 0.171.0"));
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "send", "--json", conv, "two", END);
    assert_int_equal(res.exit_code, 0);
    char *v = started_version(res.out.data);
    assert_string_equal(v, "0.171.0");
    free(v);
    bt_test_result_release(&res);
    assert_int_equal(starts(log, "|--version|"), 1);
    free(conv);
    free(kv);
    free(log);
    free(bin);
}

/* An sh wrapper whose --version is given by body (sh code), otherwise
 * logging each start and exec'ing the fake coder. */
static void wrapper_version(const char *path, const char *log, const char *body)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f,
            "#!/bin/sh\n"
            "printf '%%s|%%s|\\n' \"$0\" \"$*\" >> '%s'\n"
            "if [ \"$1\" = --version ]; then %s; fi\n"
            "exec '%s' \"$@\"\n",
            log, body, FAKE);
    fclose(f);
    assert_int_equal(chmod(path, 0755), 0);
}

/* One file run as codex and as pi: each coder keeps its own version. */
static void test_one_file_two_coders(void **state)
{
    struct ctx *c = *state;
    char *bin = path_in(c, "coder"), *log = path_in(c, "starts.log");
    wrapper(bin, log);
    char *kc = bt_xasprintf("BATON_CODEX_BIN=%s", bin), *kp = bt_xasprintf("BATON_PI_BIN=%s", bin);
    setenv_kv(c, kc);
    setenv_kv(c, kp);
    char *agent = bt_xasprintf("PI_CODING_AGENT_DIR=%s/pi-agent", c->dir);
    setenv_kv(c, agent);
    struct bt_test_result res;
    replay(c, "text");
    baton(c, &res, NULL, 0, "run", "--json", "codex first", END);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    setenv_kv(c, "FAKE_CODER_REPLAY=" PI_FIXTURES "/text.jsonl");
    setenv_kv(c, "FAKE_CODER_VERSION=0.73.1");
    for (int i = 0; i < 2; i++) {
        baton(c, &res, NULL, 0, "run", "-c", "pi", "--json", "then pi", END);
        assert_int_equal(res.exit_code, 0);
        char *v = started_version(res.out.data);
        assert_string_equal(v, "0.73.1");
        free(v);
        bt_test_result_release(&res);
    }
    assert_int_equal(starts(log, "|--version|"), 1);
    free(agent);
    free(kp);
    free(kc);
    free(log);
    free(bin);
}

/* A pi whose --version says nothing usable is asked once per executable,
 * not every turn; its turns carry no version. */
static void test_pi_garbage_version_asked_once(void **state)
{
    struct ctx *c = *state;
    char *bin = path_in(c, "pi"), *log = path_in(c, "starts.log");
    wrapper_version(bin, log, "echo 'no version here'; exit 0");
    char *kv = bt_xasprintf("BATON_PI_BIN=%s", bin);
    setenv_kv(c, kv);
    char *agent = bt_xasprintf("PI_CODING_AGENT_DIR=%s/pi-agent", c->dir);
    setenv_kv(c, agent);
    setenv_kv(c, "FAKE_CODER_REPLAY=" PI_FIXTURES "/text.jsonl");
    struct bt_test_result res;
    for (int i = 0; i < 3; i++) {
        baton(c, &res, NULL, 0, "run", "-c", "pi", "--json", "hello", END);
        assert_int_equal(res.exit_code, 0);
        char *v = started_version(res.out.data);
        assert_string_equal(v, "null");
        free(v);
        bt_test_result_release(&res);
    }
    assert_int_equal(starts(log, "|--version|"), 1);
    free(agent);
    free(kv);
    free(log);
    free(bin);
}

/* A codex that names no version and whose --version says nothing usable:
 * asked once, after its first turn, never again for the same file. */
static void test_codex_silent_garbage_asked_once(void **state)
{
    struct ctx *c = *state;
    char *bin = path_in(c, "codex"), *log = path_in(c, "starts.log");
    wrapper_version(bin, log, "echo nothing; exit 0");
    char *kv = bt_xasprintf("BATON_CODEX_BIN=%s", bin);
    setenv_kv(c, kv);
    replay_without_user_agent(c);
    struct bt_test_result res;
    for (int i = 0; i < 3; i++) {
        baton(c, &res, NULL, 0, "run", "--json", "quiet", END);
        assert_int_equal(res.exit_code, 0);
        bt_test_result_release(&res);
    }
    assert_int_equal(starts(log, "|--version|"), 1);
    free(kv);
    free(log);
    free(bin);
}

/* A wrapper script in front of pi stays the same file while the program
 * behind it changes: turns keep the stored version until `baton coders`
 * (which always asks) refreshes it. */
static void test_coders_refreshes_version(void **state)
{
    struct ctx *c = *state;
    char *bin = path_in(c, "pi"), *log = path_in(c, "starts.log");
    char *vfile = path_in(c, "version.txt");
    char *body = bt_xasprintf("cat '%s'; exit 0", vfile);
    wrapper_version(bin, log, body);
    FILE *f = fopen(vfile, "w");
    fputs("0.73.1\n", f);
    fclose(f);
    char *kv = bt_xasprintf("BATON_PI_BIN=%s", bin);
    setenv_kv(c, kv);
    char *agent = bt_xasprintf("PI_CODING_AGENT_DIR=%s/pi-agent", c->dir);
    setenv_kv(c, agent);
    setenv_kv(c, "FAKE_CODER_REPLAY=" PI_FIXTURES "/text.jsonl");
    const char *want[] = {"0.73.1", "0.73.1", "0.74.0"};
    struct bt_test_result res;
    for (int i = 0; i < 3; i++) {
        if (i == 1) { /* the program behind the wrapper is upgraded */
            f = fopen(vfile, "w");
            fputs("0.74.0\n", f);
            fclose(f);
        }
        if (i == 2) {
            baton(c, &res, NULL, 0, "coders", END);
            assert_non_null(strstr(res.out.data, "0.74.0"));
            bt_test_result_release(&res);
        }
        baton(c, &res, NULL, 0, "run", "-c", "pi", "--json", "hello", END);
        assert_int_equal(res.exit_code, 0);
        char *v = started_version(res.out.data);
        assert_string_equal(v, want[i]);
        free(v);
        bt_test_result_release(&res);
    }
    free(agent);
    free(kv);
    free(body);
    free(vfile);
    free(log);
    free(bin);
}

/* A codex that names no version and whose --version hangs: the run is
 * recorded completed before the probe; Ctrl-C during the probe stops it
 * (and its process group) without touching the recorded run. */
static void test_late_probe_after_the_run(void **state)
{
    struct ctx *c = *state;
    char *bin = path_in(c, "codex"), *log = path_in(c, "starts.log");
    char *pidfile = path_in(c, "probe.pid");
    char *body = bt_xasprintf("echo $$ > '%s'; exec sleep 30", pidfile);
    wrapper_version(bin, log, body);
    char *kv = bt_xasprintf("BATON_CODEX_BIN=%s", bin);
    setenv_kv(c, kv);
    replay_without_user_agent(c);

    char *out = path_in(c, "bg.out");
    const char *argv[] = {BATON, "run", "--json", "late", NULL};
    c->env[c->nenv] = NULL;
    pid_t pid = bt_test_spawn_bg(argv, (const char *const *)c->env, out);
    assert_true(pid > 0);
    int probe = 0;
    for (int64_t t0 = 0; probe <= 0 && bt_test_poll(&t0);) { /* the probe has started */
        char *p = bt_test_slurp(pidfile, NULL);
        probe = p ? (int)strtol(p, NULL, 10) : 0;
        free(p);
    }
    assert_true(probe > 0);
    char *text = bt_test_slurp(out, NULL);
    assert_non_null(strstr(text, "\"turn.completed\""));
    char *conv = conversation_of(text);
    kill(pid, SIGINT);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    for (int64_t t0 = 0; kill(probe, 0) == 0 && bt_test_poll(&t0);)
        ;
    assert_int_not_equal(kill(probe, 0), 0);

    struct bt_test_result res;
    baton(c, &res, NULL, 0, "show", "--debug", conv, END);
    assert_non_null(strstr(res.out.data, ": completed,"));
    assert_null(strstr(res.out.data, "ended early"));
    bt_test_result_release(&res);
    free(conv);
    free(text);
    free(out);
    free(kv);
    free(body);
    free(pidfile);
    free(log);
    free(bin);
}

/* The WAL that closing leaves behind stays bounded across many short
 * processes (each rebuilds the WAL index, which forgets what was copied
 * into the db: only an emptied WAL starts over). */
static void test_wal_stays_bounded(void **state)
{
    struct ctx *c = *state;
    replay(c, "text");
    struct bt_test_result res;
    char *wal = bt_xasprintf("%s/home/baton.db-wal", c->dir);
    off_t most = 0;
    for (int i = 0; i < 30; i++) {
        baton(c, &res, NULL, 0, "run", "--json", "again", END);
        assert_int_equal(res.exit_code, 0);
        bt_test_result_release(&res);
        struct stat st;
        if (stat(wal, &st) == 0 && st.st_size > most)
            most = st.st_size;
    }
    /* 128 pages before a close checkpoints, plus one turn's pages */
    assert_true(most < (off_t)1024 * 1024);
    baton(c, &res, NULL, 0, "ls", END);
    assert_int_equal(res.exit_code, 0);
    size_t lines = 0;
    for (const char *p = res.out.data; (p = strchr(p, '\n')) != NULL; p++)
        lines++;
    assert_int_equal(lines, 30);
    bt_test_result_release(&res);
    free(wal);
}

/* An npm prefix whose platform package's binary is the logging wrapper:
 * baton runs it directly (the launcher, a Node script, would fail here),
 * with the environment the launcher gives, and `baton coders` says so. */
static void test_codex_launcher_seen_through(void **state)
{
    struct ctx *c = *state;
#if defined(__x86_64__)
    const char *pkg = "codex-linux-x64", *triple = "x86_64-unknown-linux-musl";
#elif defined(__aarch64__)
    const char *pkg = "codex-linux-arm64", *triple = "aarch64-unknown-linux-musl";
#else
    const char *pkg = NULL, *triple = NULL;
    skip(); /* a platform npm's codex has no binary for */
#endif
    char *root = path_in(c, "npm/node_modules/@openai/codex");
    char *d1 = bt_xasprintf("%s/bin", root);
    char *d2 = bt_xasprintf("%s/../%s/vendor/%s/bin", root, pkg, triple);
    char *d3 = bt_xasprintf("%s/../../.bin", root);
    mkdir_p(d1);
    mkdir_p(d2);
    mkdir_p(d3);
    char *pj = bt_xasprintf("%s/package.json", root);
    FILE *f = fopen(pj, "w");
    fputs("{\"name\": \"@openai/codex\", \"version\": \"0.171.0\"}\n", f);
    fclose(f);
    char *js = bt_xasprintf("%s/bin/codex.js", root);
    f = fopen(js, "w");
    fputs("#!/bin/sh\necho launcher >&2\nexit 1\n", f);
    fclose(f);
    chmod(js, 0755);
    char *ppj = bt_xasprintf("%s/../%s/package.json", root, pkg);
    f = fopen(ppj, "w");
    fputs("{\"name\": \"@openai/codex\"}\n", f);
    fclose(f);
    char *native = bt_xasprintf("%s/../%s/vendor/%s/bin/codex", root, pkg, triple);
    char *log = path_in(c, "starts.log");
    wrapper(native, log);
    char *link = bt_xasprintf("%s/../../.bin/codex", root);
    assert_int_equal(symlink("../@openai/codex/bin/codex.js", link), 0);
    char *kv = bt_xasprintf("BATON_CODEX_BIN=%s", link);
    setenv_kv(c, kv);
    replay(c, "text");

    struct bt_test_result res;
    baton(c, &res, NULL, 0, "run", "--json", "through", END);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    assert_int_equal(starts(log, "app-server --listen stdio://|1"), 1);

    baton(c, &res, NULL, 0, "coders", "--json", END);
    assert_int_equal(res.exit_code, 0);
    cJSON **lines;
    size_t n = bt_test_json_lines(res.out.data, &lines);
    assert_true(n >= 1);
    char *real_native = realpath(native, NULL), *real_js = realpath(js, NULL);
    assert_string_equal(bt_test_jstr(lines[0], "coder"), "codex");
    assert_string_equal(bt_test_jstr(lines[0], "path"), real_native);
    assert_string_equal(bt_test_jstr(lines[0], "launcher"), real_js);
    bt_test_lines_free(lines, n);
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "coders", END);
    assert_non_null(strstr(res.out.data, "behind the launcher"));
    bt_test_result_release(&res);
    free(real_native);
    free(real_js);
    free(kv);
    free(link);
    free(log);
    free(native);
    free(ppj);
    free(js);
    free(pj);
    free(d3);
    free(d2);
    free(d1);
    free(root);
}

/* path.gz (a recorded stream) decompressed to dst. */
static void gunzip_to(const char *gz_path, const char *dst)
{
    gzFile in = gzopen(gz_path, "rb");
    assert_non_null(in);
    FILE *out = fopen(dst, "wb");
    assert_non_null(out);
    char buf[65536];
    int n;
    while ((n = gzread(in, buf, sizeof buf)) > 0)
        assert_int_equal(fwrite(buf, 1, (size_t)n, out), (size_t)n);
    assert_int_equal(n, 0);
    gzclose(in);
    fclose(out);
}

static char *run_of(const char *out)
{
    cJSON **lines;
    size_t n = bt_test_json_lines(out, &lines);
    assert_true(n >= 1);
    char *run = bt_xstrdup(bt_test_jstr(lines[0], "run"));
    bt_test_lines_free(lines, n);
    return run;
}

/* pi's 200 KB answer is 42 MB of stdout: the run file keeps all of it in
 * well under 1 MB, and gives it back byte for byte (`show --raw` too). */
static void test_run_file_compressed(void **state)
{
    struct ctx *c = *state;
    char *stream = path_in(c, "large.jsonl");
    gunzip_to(PI_FIXTURES "/large.jsonl.gz", stream);
    char *kv = bt_xasprintf("FAKE_CODER_REPLAY=%s", stream);
    setenv_kv(c, kv);
    setenv_kv(c, "BATON_PI_BIN=" FAKE);
    char *agent = bt_xasprintf("PI_CODING_AGENT_DIR=%s/pi-agent", c->dir);
    setenv_kv(c, agent);

    struct bt_test_result res;
    baton(c, &res, NULL, 0, "run", "-c", "pi", "--json", "large", END);
    assert_int_equal(res.exit_code, 0);
    char *run = run_of(res.out.data), *conv = conversation_of(res.out.data);
    bt_test_result_release(&res);
    char *file = bt_xasprintf("%s/home/runs/%s.out.zst", c->dir, run);
    struct stat st, orig;
    assert_int_equal(stat(file, &st), 0);
    assert_int_equal(stat(stream, &orig), 0);
    assert_true(orig.st_size > 40000000L);
    assert_true(st.st_size < 1000000L);
    size_t want_len;
    char *want = bt_test_slurp(stream, &want_len);
    struct bt_buf got = BT_BUF_INIT;
    int truncated = 1;
    assert_int_equal(bt_runfile_read(file, &got, &truncated), 0);
    assert_int_equal(truncated, 0);
    assert_int_equal(got.len, want_len);
    assert_memory_equal(got.data, want, want_len);
    bt_buf_release(&got);

    baton(c, &res, NULL, 0, "show", "--raw", conv, END);
    assert_int_equal(res.exit_code, 0);
    assert_int_equal(res.out.len, want_len);
    assert_memory_equal(res.out.data, want, want_len);
    bt_test_result_release(&res);
    free(want);
    free(file);
    free(conv);
    free(run);
    free(agent);
    free(kv);
    free(stream);
}

/* baton killed with SIGKILL mid-turn: the run file is a readable prefix of
 * what the coder wrote, everything read before the kill, and `show --raw`
 * says it ends early. */
static void test_run_file_after_kill(void **state)
{
    struct ctx *c = *state;
    replay(c, "text");
    setenv_kv(c, "FAKE_CODER_HANG_AFTER=12"); /* two message deltas */
    char *out = path_in(c, "bg.out");
    const char *argv[] = {BATON, "run", "--json", "hang", NULL};
    c->env[c->nenv] = NULL;
    pid_t pid = bt_test_spawn_bg(argv, (const char *const *)c->env, out);
    assert_true(pid > 0);
    /* wait for the events of those lines to be out */
    char *text = NULL;
    for (int64_t t0 = 0;; free(text)) {
        text = bt_test_slurp(out, NULL);
        const char *d = text ? strstr(text, "\"item.delta\"") : NULL;
        if (d && strstr(d + 1, "\"item.delta\""))
            break;
        if (!bt_test_poll(&t0))
            bt_test_give_up("two item.delta events never came to %s", out);
    }
    char *conv0 = conversation_of(text);
    struct bt_test_result live;
    baton(c, &live, NULL, 0, "show", "--raw", conv0, END); /* while it runs */
    assert_int_equal(live.exit_code, 0);
    assert_non_null(strstr(live.err.data, "still running"));
    assert_true(live.out.len > 0);
    bt_test_result_release(&live);
    baton(c, &live, NULL, 0, "show", "--raw", "--json", conv0, END);
    assert_int_equal(live.exit_code, 2);
    assert_int_equal(live.out.len, 0);
    bt_test_result_release(&live);
    free(conv0);
    kill(pid, SIGKILL);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    char *run = run_of(text), *conv = conversation_of(text);

    /* the first twelve recorded lines, exactly */
    size_t len;
    char *rec = bt_test_slurp(FIXTURES "/text.jsonl", &len);
    char *p = rec;
    for (int i = 0; i < 12; i++)
        p = strchr(p, '\n') + 1;
    size_t want = (size_t)(p - rec);
    char *file = bt_xasprintf("%s/home/runs/%s.out.zst", c->dir, run);
    struct bt_buf got = BT_BUF_INIT;
    int truncated = 0;
    assert_int_equal(bt_runfile_read(file, &got, &truncated), 0);
    assert_int_equal(truncated, 1);
    assert_int_equal(got.len, want);
    assert_memory_equal(got.data, rec, want);
    bt_buf_release(&got);

    struct bt_test_result res;
    baton(c, &res, NULL, 0, "show", "--raw", conv, END);
    assert_int_equal(res.exit_code, 0);
    assert_int_equal(res.out.len, want);
    assert_non_null(strstr(res.err.data, "ends early"));
    bt_test_result_release(&res);
    free(file);
    free(rec);
    free(conv);
    free(run);
    free(text);
    free(out);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_pi_probed_once),
        T(test_codex_never_probed),
        T(test_codex_silent_version_probed_after),
        T(test_one_file_two_coders),
        T(test_pi_garbage_version_asked_once),
        T(test_late_probe_after_the_run),
        T(test_codex_silent_garbage_asked_once),
        T(test_coders_refreshes_version),
        T(test_wal_stays_bounded),
        T(test_codex_launcher_seen_through),
        T(test_run_file_compressed),
        T(test_run_file_after_kill),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
