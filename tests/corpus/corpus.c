/* SPDX-License-Identifier: MIT */
/*
 * corpus: the bad-input corpus. Each tests/corpus/cases/<name>.case file is
 * one case: what the coder writes and does, how baton is run, and what
 * baton must show. A new case is a new file; the format is in
 * tests/corpus/README.md. Every case also checks the invariants of any
 * --json run (only JSON lines, seq 1..n, turn.started first, exactly one
 * turn.completed last) and that no process of the coder's group is left.
 *
 * usage: corpus CASES_DIR [NAME_SUBSTRING]
 */
#include <dirent.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "support.h"

#define BATON BT_BINARY_DIR "/baton"
#define FAKE BT_BINARY_DIR "/tests/fake-coder/fake-coder"
#define FAKE_ACP BT_BINARY_DIR "/tests/fake-coder/fake-acp"
#define MAX_LIST 32

struct count {
    char type[64], kind[64];
    char op[3];
    int n;
};

/* The values of a header line that may come more than once. */
struct list {
    char *v[MAX_LIST];
    int n;
};

static int list_add(struct list *l, char *v)
{
    if (l->n == MAX_LIST)
        return -1;
    l->v[l->n++] = v;
    return 0;
}

static void list_release(struct list *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->v[i]);
    l->n = 0;
}

struct corpus_case {
    char *path, *name;
    char *replay; /* path of a replay file, or NULL */
    struct bt_buf inline_stdout;
    int has_inline;
    struct bt_buf script; /* sh lines run as the coder */
    char *env[MAX_LIST];
    int nenv;
    char *args[MAX_LIST];
    int nargs;
    char *stdin_text;
    char *coder;     /* "codex" (default), "pi", "claude", or an ACP coder */
    int expect_exit; /* -1: not checked */
    char *status, *error_kind, *final_text, *final_contains;
    struct list error_contains, stdout_lacks, stdout_has; /* each line one more to check */
    struct count counts[MAX_LIST];
    int ncounts;
};

/* ---- reading a case ------------------------------------------------- */

static char *value_of(const char *line, const char *key)
{
    size_t n = strlen(key);
    if (strncmp(line, key, n) != 0 || line[n] != ':')
        return NULL;
    const char *v = line + n + 1;
    while (*v == ' ')
        v++;
    return bt_xstrdup(v);
}

static int parse_count(const char *v, struct count *c)
{
    char what[64];
    int used = 0;
    if (sscanf(v, "%63s %2s %n", what, c->op, &used) != 2 || !used)
        return -1;
    char *end;
    long n = strtol(v + used, &end, 10);
    if (end == v + used || *end || n < 0 || n > 1000000)
        return -1;
    c->n = (int)n;
    char *slash = strchr(what, '/');
    if (slash)
        *slash = '\0';
    snprintf(c->type, sizeof(c->type), "%s", what);
    snprintf(c->kind, sizeof(c->kind), "%s", slash ? slash + 1 : "");
    return 0;
}

/* A line that may come more than once, each one more check: 1 if line
 * was one. */
static int list_line(struct corpus_case *c, const char *line)
{
    const struct {
        const char *key;
        struct list *list;
    } lists[] = {
        {"expect-error-contains", &c->error_contains},
        {"expect-stdout-lacks", &c->stdout_lacks},
        {"expect-stdout-has", &c->stdout_has},
    };
    for (size_t i = 0; i < BT_ARRAY_SIZE(lists); i++) {
        char *v = value_of(line, lists[i].key);
        if (!v)
            continue;
        if (list_add(lists[i].list, v)) {
            free(v);
            fail_msg("%s: more than %d lines %s", c->name, MAX_LIST, lists[i].key);
        }
        return 1;
    }
    return 0;
}

static void parse_line(struct corpus_case *c, const char *line)
{
    char *v;
    if (line[0] == '#' || line[0] == '\0' || list_line(c, line))
        return;
    if ((v = value_of(line, "replay")))
        c->replay = bt_xasprintf("%s/%s", BT_SOURCE_DIR, v), free(v);
    else if ((v = value_of(line, "env")) && c->nenv < MAX_LIST)
        c->env[c->nenv++] = v;
    else if ((v = value_of(line, "arg")) && c->nargs < MAX_LIST)
        c->args[c->nargs++] = v;
    else if ((v = value_of(line, "script")))
        bt_buf_addf(&c->script, "%s\n", v), free(v);
    else if ((v = value_of(line, "stdin")))
        c->stdin_text = v;
    else if ((v = value_of(line, "coder")))
        c->coder = v;
    else if ((v = value_of(line, "expect-exit")))
        c->expect_exit = (int)strtol(v, NULL, 10), free(v);
    else if ((v = value_of(line, "expect-status")))
        c->status = v;
    else if ((v = value_of(line, "expect-error-kind")))
        c->error_kind = v;
    else if ((v = value_of(line, "expect-final-text")))
        c->final_text = v;
    else if ((v = value_of(line, "expect-final-contains")))
        c->final_contains = v;
    else if ((v = value_of(line, "expect-count")) && c->ncounts < MAX_LIST) {
        if (parse_count(v, &c->counts[c->ncounts]) == 0)
            c->ncounts++;
        else
            fail_msg("%s: bad expect-count '%s'", c->name, v);
        free(v);
    } else
        fail_msg("%s: unknown line '%s'", c->name, line);
}

/* Headers up to "--- stdout", then the coder's stdout verbatim. */
static void load_case(struct corpus_case *c)
{
    size_t len;
    char *text = bt_test_slurp(c->path, &len);
    assert_non_null(text);
    const char *marker = "--- stdout\n";
    char *body = strstr(text, marker);
    if (body) {
        c->has_inline = 1;
        const char *raw = body + strlen(marker);
        bt_buf_add(&c->inline_stdout, raw, len - (size_t)(raw - text));
        *body = '\0';
    }
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
        parse_line(c, line);
    free(text);
}

/* ---- running it ----------------------------------------------------- */

static char *write_file(const char *dir, const char *name, const char *data, size_t len, int mode)
{
    char *path = bt_xasprintf("%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fwrite(data, 1, len, f);
    fclose(f);
    chmod(path, (mode_t)mode);
    return path;
}

/* The coder: the fake coder replaying a file, or a shell script, standing
 * in for codex, pi or claude (coder: NAME), whose session files go under
 * dir. */
/* The ACP coders run the scripted ACP agent (tests/fake-coder/fake-acp.c)
 * unless the case replays or scripts something. */
static const struct {
    const char *coder, *var, *version;
} acp_coders[] = {
    {"gemini", "BATON_GEMINI_BIN", "0.61.0"},
    {"opencode", "BATON_OPENCODE_BIN", "1.18.33"},
    {"copilot", "BATON_COPILOT_BIN", "GitHub Copilot CLI 1.0.102."},
};

static char *coder_env(struct corpus_case *c, const char *dir, char **replay_env)
{
    int pi = c->coder && strcmp(c->coder, "pi") == 0;
    int claude = c->coder && strcmp(c->coder, "claude") == 0;
    const char *var = pi ? "BATON_PI_BIN" : claude ? "BATON_CLAUDE_BIN" : "BATON_CODEX_BIN";
    const char *version = pi ? "0.73.1" : claude ? "2.1.332 (Claude Code)" : "codex-cli 0.171.0";
    const char *fake = FAKE;
    for (size_t i = 0; c->coder && i < sizeof(acp_coders) / sizeof(acp_coders[0]); i++) {
        if (strcmp(c->coder, acp_coders[i].coder) == 0) {
            var = acp_coders[i].var;
            version = acp_coders[i].version;
            fake = c->has_inline || c->replay ? FAKE : FAKE_ACP;
        }
    }
    *replay_env = NULL;
    if (c->script.len) {
        struct bt_buf s = BT_BUF_INIT;
        bt_buf_addf(&s, "#!/bin/sh\nif [ \"$1\" = --version ]; then echo '%s'; exit 0; fi\n",
                    version);
        bt_buf_add(&s, c->script.data, c->script.len);
        char *path = write_file(dir, "coder.sh", s.data, s.len, 0700);
        bt_buf_release(&s);
        char *kv = bt_xasprintf("%s=%s", var, path);
        free(path);
        return kv;
    }
    if (c->has_inline) {
        char *path =
            write_file(dir, "stdout.jsonl", c->inline_stdout.data, c->inline_stdout.len, 0600);
        *replay_env = bt_xasprintf("FAKE_CODER_REPLAY=%s", path);
        free(path);
    } else if (c->replay) {
        *replay_env = bt_xasprintf("FAKE_CODER_REPLAY=%s", c->replay);
    }
    return bt_xasprintf("%s=%s", var, fake);
}

static const char *type_of(const cJSON *ev)
{
    return bt_test_jstr(ev, "type");
}

static int compare(int have, const char *op, int want)
{
    if (strcmp(op, "=") == 0)
        return have == want;
    if (strcmp(op, ">=") == 0)
        return have >= want;
    if (strcmp(op, "<=") == 0)
        return have <= want;
    return 0;
}

static void check_counts(const struct corpus_case *c, cJSON **lines, size_t n)
{
    for (int k = 0; k < c->ncounts; k++) {
        const struct count *want = &c->counts[k];
        int have = 0;
        for (size_t i = 0; i < n; i++) {
            const char *kind = bt_test_jstr(lines[i], "kind");
            const cJSON *item = cJSON_GetObjectItem(lines[i], "item");
            if (!kind && item)
                kind = bt_test_jstr(item, "kind");
            have += strcmp(type_of(lines[i]), want->type) == 0 &&
                    (!want->kind[0] || (kind && strcmp(kind, want->kind) == 0));
        }
        if (!compare(have, want->op, want->n))
            fail_msg("%s: %d %s%s%s events, expected %s %d", c->name, have, want->type,
                     want->kind[0] ? "/" : "", want->kind, want->op, want->n);
    }
}

/* --json output: the stream invariants, then the case's expectations. */
static void check_stream(const struct corpus_case *c, const char *out)
{
    cJSON **lines;
    size_t n = bt_test_json_lines(out, &lines);
    assert_true(n >= 2);
    int completed = 0;
    for (size_t i = 0; i < n; i++) {
        if (!lines[i])
            fail_msg("%s: stdout line %zu is not JSON", c->name, i + 1);
        assert_int_equal(cJSON_GetObjectItem(lines[i], "seq")->valueint, (int)i + 1);
        completed += strcmp(type_of(lines[i]), "turn.completed") == 0;
    }
    assert_string_equal(type_of(lines[0]), "turn.started");
    assert_string_equal(type_of(lines[n - 1]), "turn.completed");
    assert_int_equal(completed, 1);
    const cJSON *end = lines[n - 1];
    if (c->status)
        assert_string_equal(bt_test_jstr(end, "status"), c->status);
    if (c->error_kind)
        assert_string_equal(bt_test_jstr(end, "error_kind") ? bt_test_jstr(end, "error_kind")
                                                            : "(none)",
                            c->error_kind);
    if (c->final_text)
        assert_string_equal(bt_test_jstr(end, "final_text"), c->final_text);
    if (c->final_contains)
        assert_non_null(strstr(bt_test_jstr(end, "final_text"), c->final_contains));
    for (int i = 0; i < c->error_contains.n; i++) {
        const char *error = bt_test_jstr(end, "error");
        if (!error || !strstr(error, c->error_contains.v[i]))
            fail_msg("error lacks '%s': %s", c->error_contains.v[i], error ? error : "(none)");
    }
    check_counts(c, lines, n);
    bt_test_lines_free(lines, n);
}

/* No process of the run's group may outlive baton (init may take a moment
 * to reap what baton killed). */
static void check_group_gone(const struct corpus_case *c, const char *home)
{
    char *db = bt_xasprintf("%s/baton.db", home);
    sqlite3 *h;
    sqlite3_stmt *q;
    if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(h, "SELECT pgid FROM runs", -1, &q, NULL) == SQLITE_OK) {
        while (sqlite3_step(q) == SQLITE_ROW) {
            int pgid = sqlite3_column_int(q, 0);
            for (int i = 0; pgid > 1 && i < 250 && kill(-pgid, 0) == 0; i++)
                usleep(20000);
            if (pgid > 1 && kill(-pgid, 0) == 0)
                fail_msg("%s: process group %d outlived baton", c->name, pgid);
        }
        sqlite3_finalize(q);
    }
    sqlite3_close(h);
    free(db);
}

static void run_case(void **state)
{
    struct corpus_case *c = *state;
    load_case(c);
    char *dir = bt_test_mkdtemp(bt_test_scratch_root(BT_BINARY_DIR), "corpus");
    char *home = bt_xasprintf("%s/home", dir);
    char *replay_env;
    char *env[MAX_LIST + 10];
    int k = 0;
    env[k++] = coder_env(c, dir, &replay_env);
    env[k++] = bt_xasprintf("BATON_HOME=%s", home);
    env[k++] = bt_xasprintf("GIT_CEILING_DIRECTORIES=%s", /* not baton's repository */
                            bt_test_scratch_root(BT_BINARY_DIR));
    env[k++] = bt_xstrdup("NO_COLOR=1");
    env[k++] = bt_xasprintf("PI_CODING_AGENT_DIR=%s/pi-agent", dir);
    env[k++] = bt_xasprintf("CLAUDE_CONFIG_DIR=%s/claude-config", dir);
    env[k++] = bt_xstrdup("BATON_SOURCE_DIR=" BT_SOURCE_DIR); /* for scripts */
    if (replay_env)
        env[k++] = replay_env;
    for (int i = 0; i < c->nenv; i++)
        env[k++] = bt_xstrdup(c->env[i]);
    env[k] = NULL;
    const char *argv[MAX_LIST + 2] = {BATON};
    for (int i = 0; i < c->nargs; i++)
        argv[i + 1] = c->args[i];
    argv[c->nargs + 1] = NULL;
    struct bt_test_run r = {.argv = argv,
                            .env = (const char *const *)env,
                            .cwd = dir,
                            .input = c->stdin_text,
                            .timeout_s = 60};
    struct bt_test_result res;
    assert_int_equal(bt_test_exec(&r, &res), 0);
    if (res.timed_out)
        fail_msg("%s: baton did not finish in 60 s", c->name);
    if (c->expect_exit >= 0 && res.exit_code != c->expect_exit)
        fail_msg("%s: exit %d, expected %d; stderr: %s", c->name, res.exit_code, c->expect_exit,
                 res.err.data);
    int json = 0;
    for (int i = 0; i < c->nargs; i++)
        json |= strcmp(c->args[i], "--json") == 0;
    if (json)
        check_stream(c, res.out.data);
    for (int i = 0; i < c->stdout_lacks.n; i++)
        if (strstr(res.out.data, c->stdout_lacks.v[i]))
            fail_msg("stdout has '%s':\n%s", c->stdout_lacks.v[i], res.out.data);
    for (int i = 0; i < c->stdout_has.n; i++)
        if (!strstr(res.out.data, c->stdout_has.v[i]))
            fail_msg("stdout lacks '%s':\n%s", c->stdout_has.v[i], res.out.data);
    check_group_gone(c, home);
    bt_test_result_release(&res);
    for (int i = 0; env[i]; i++)
        free(env[i]);
    bt_test_rmdir(dir);
    free(dir);
    free(home);
}

static int release_case(void **state)
{
    struct corpus_case *c = *state;
    free(c->replay);
    bt_buf_release(&c->inline_stdout);
    bt_buf_release(&c->script);
    for (int i = 0; i < c->nenv; i++)
        free(c->env[i]);
    for (int i = 0; i < c->nargs; i++)
        free(c->args[i]);
    free(c->stdin_text);
    free(c->coder);
    free(c->status);
    free(c->error_kind);
    free(c->final_text);
    free(c->final_contains);
    list_release(&c->error_contains);
    list_release(&c->stdout_lacks);
    list_release(&c->stdout_has);
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct corpus_case *)a)->name, ((const struct corpus_case *)b)->name);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: corpus CASES_DIR [NAME_SUBSTRING]\n");
        return 2;
    }
    DIR *d = opendir(argv[1]);
    struct dirent *e;
    struct corpus_case *cases = NULL;
    size_t n = 0;
    while (d && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".case") != 0)
            continue;
        if (argc > 2 && !strstr(e->d_name, argv[2]))
            continue;
        cases = bt_xrealloc(cases, (n + 1) * sizeof(*cases));
        struct corpus_case *c = &cases[n++];
        memset(c, 0, sizeof(*c));
        c->path = bt_xasprintf("%s/%s", argv[1], e->d_name);
        c->name = bt_xstrndup(e->d_name, len - 5);
        c->expect_exit = -1;
        bt_buf_init(&c->inline_stdout);
        bt_buf_init(&c->script);
    }
    if (d)
        closedir(d);
    if (n == 0) {
        fprintf(stderr, "corpus: no cases in %s\n", argv[1]);
        return 1;
    }
    qsort(cases, n, sizeof(*cases), by_name);
    struct CMUnitTest *tests = bt_xcalloc(n, sizeof(*tests));
    for (size_t i = 0; i < n; i++) {
        tests[i].name = cases[i].name;
        tests[i].test_func = run_case;
        tests[i].teardown_func = release_case;
        tests[i].initial_state = &cases[i];
    }
    int failed = _cmocka_run_group_tests("corpus", tests, n, NULL, NULL);
    for (size_t i = 0; i < n; i++) {
        free(cases[i].path);
        free(cases[i].name);
    }
    free(cases);
    free(tests);
    return failed ? 1 : 0;
}
