/* SPDX-License-Identifier: MIT */
/* live: the harness shared by the live tests (see live.h). */
#include "live.h"

#include <dirent.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#define BATON BT_BINARY_DIR "/baton"
#define STANDIN BT_BINARY_DIR "/tests/standin/baton-standin"

struct bt_live bt_live;

static char *read_port(const char *path)
{
    for (int i = 0; i < 200; i++) {
        size_t len;
        char *s = bt_test_slurp(path, &len);
        if (s && len) {
            s[strcspn(s, "\n")] = '\0';
            return s;
        }
        free(s);
        usleep(20000);
    }
    return NULL;
}

/* BATON_LIVE_KEEP (an absolute directory), or NULL when unset or empty. */
static const char *keep_dir(void)
{
    const char *keep = getenv("BATON_LIVE_KEEP");
    if (!keep || !*keep)
        return NULL;
    if (keep[0] != '/')
        fail_msg("BATON_LIVE_KEEP=%s is not an absolute path", keep);
    return keep;
}

/* Where scratch directories go: BATON_LIVE_KEEP when set (kept after the
 * test, live.h); else where every test makes its own (support.h:
 * $BATON_CACHE/scratch or the build tree), the temporary directory too
 * (codex-env.sh gives a codex home there a TMPDIR of its own). Caller
 * frees. */
static char *scratch_base(void)
{
    const char *keep = keep_dir();
    if (keep) {
        mkdir(keep, 0700);
        return bt_xstrdup(keep);
    }
    return bt_xstrdup(bt_test_scratch_root(BT_BINARY_DIR));
}

/* Run the env script and keep its KEY=VALUE lines in env from *k on
 * (room for four more after them). NULL, or why not (owned). */
static char *env_lines(char **env, int cap, const char *script, const char *home, const char *port,
                       int *k)
{
    char *dir = bt_xasprintf("%s/%s", bt_live.dir, home);
    const char *argv[] = {"/bin/bash", script, dir, port, NULL};
    struct bt_test_run r = {.argv = argv, .timeout_s = 60};
    struct bt_test_result res;
    int rc = bt_test_exec(&r, &res);
    free(dir);
    if (rc != 0)
        return bt_xasprintf("cannot run %s", script);
    char *why = NULL;
    if (res.exit_code)
        why = bt_xasprintf("%s failed: %s", script, res.err.data);
    /* four more entries follow these lines */
    for (char *line = why ? NULL : strtok(res.out.data, "\n"); line; line = strtok(NULL, "\n")) {
        if (*k + 4 >= cap) {
            why = bt_xasprintf("%s printed more than %d lines", script, cap - 5);
            break;
        }
        env[(*k)++] = bt_xstrdup(line);
    }
    bt_test_result_release(&res);
    return why;
}

/* Stop the stand-in, if one was started: a pid of 0 (none, or a harness
 * already torn down) must never reach kill(), which would signal the
 * whole process group, ctest and its shell included. */
static void stop_standin(struct bt_live *g)
{
    if (g->standin > 0) {
        kill(g->standin, SIGTERM);
        waitpid(g->standin, NULL, 0);
    }
    g->standin = 0;
}

/* A set-up step failed: stop the stand-in it started and remove what it
 * made (cmocka runs no teardown after a failed setup; no tmux server was
 * started yet), then fail with why. */
static void setup_failed(char *why)
{
    struct bt_live *g = &bt_live;
    stop_standin(g);
    if (!keep_dir())
        bt_test_rmdir(g->dir);
    free(g->dir);
    free(g->log);
    for (size_t i = 0; i < BT_ARRAY_SIZE(g->env); i++)
        free(g->env[i]);
    memset(g, 0, sizeof(*g));
    print_message("live: set-up failed (its stand-in is stopped): %s\n", why);
    free(why);
    fail();
}

void bt_live_setup(const char *prefix, const char *env_script, const char *home,
                   const char *bin_var, const char *bin)
{
    struct bt_live *g = &bt_live;
    char *base = scratch_base();
    g->dir = bt_test_mkdtemp(base, prefix);
    if (!g->dir)
        fail_msg("live: cannot make a directory under %s", base);
    free(base);
    char *portfile = bt_xasprintf("%s/port", g->dir);
    g->log = bt_xasprintf("%s/standin.log", g->dir);
    char *out = bt_xasprintf("%s/standin.out", g->dir);
    const char *argv[] = {STANDIN, "--port-file", portfile, "--log", g->log, NULL};
    g->standin = bt_test_spawn_bg(argv, NULL, out);
    char *port = read_port(portfile);
    free(portfile);
    free(out);
    if (!port)
        setup_failed(bt_xstrdup("baton-standin wrote no port"));
    int k = 0;
    char *why = env_lines(g->env, (int)BT_ARRAY_SIZE(g->env), env_script, home, port, &k);
    free(port);
    if (why)
        setup_failed(why);
    g->env[k++] = bt_xasprintf("BATON_HOME=%s/baton-home", g->dir);
    g->env[k++] = bt_xasprintf("%s=%s", bin_var, bin);
    g->env[k++] = bt_xstrdup("NO_COLOR=1");
    g->env[k++] = bt_xasprintf("TMUX_TMPDIR=%s", g->dir); /* a tmux server of our own */
    /* the scratch directory may be in the build tree, in baton's own
     * repository: a turn's changes are looked for in it and below only
     * (git climbs out of a ceiling it starts in: the ceiling is above) */
    char *above = bt_xstrdup(g->dir);
    *strrchr(above, '/') = '\0';
    g->env[k++] = bt_xasprintf("GIT_CEILING_DIRECTORIES=%s", above);
    free(above);
    g->work = bt_xasprintf("%s/work", g->dir);
    g->other = bt_xasprintf("%s/other", g->dir);
    mkdir(g->work, 0700);
    mkdir(g->other, 0700);
}

void bt_live_teardown(void)
{
    struct bt_live *g = &bt_live;
    if (!g->dir) /* a set-up that failed cleaned up: no tmux of ours to stop */
        return;
    const char *kill_server[] = {"kill-server", NULL};
    struct bt_test_result res;
    bt_live_tmux(kill_server, &res); /* fails harmlessly when none was started */
    bt_test_result_release(&res);
    stop_standin(g);
    if (keep_dir())
        print_message("live: kept %s\n", g->dir);
    else
        bt_test_rmdir(g->dir);
    free(g->dir);
    free(g->log);
    free(g->work);
    free(g->other);
    for (size_t i = 0; i < BT_ARRAY_SIZE(g->env); i++)
        free(g->env[i]);
    memset(g, 0, sizeof(*g));
}

void bt_live_baton(const char *cwd, const char *const *args, struct bt_test_result *res,
                   int sigint_ms)
{
    const char *argv[16] = {BATON};
    size_t n = 1;
    for (; args[n - 1] && n < 15; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    struct bt_test_run r = {.argv = argv,
                            .env = (const char *const *)bt_live.env,
                            .cwd = cwd,
                            .timeout_s = 120,
                            .send_sigint_after_ms = sigint_ms};
    assert_int_equal(bt_test_exec(&r, res), 0);
    assert_false(res->timed_out);
    if (res->exit_code != 0 && res->exit_code != 130) /* say why, for a failing case */
        print_message("baton exited %d: %s\n", res->exit_code, res->err.data);
}

const char *bt_live_type(const cJSON *ev)
{
    return bt_test_jstr(ev, "type");
}

/* The stream invariants every run must hold: only JSON lines, seq rising
 * by 1 from 1, turn.started first, one turn.completed, last. */
size_t bt_live_stream(const char *out, cJSON ***lines)
{
    size_t n = bt_test_json_lines(out, lines);
    assert_true(n >= 2);
    int completed = 0;
    for (size_t i = 0; i < n; i++) {
        assert_non_null((*lines)[i]);
        const cJSON *seq = cJSON_GetObjectItem((*lines)[i], "seq");
        assert_int_equal((int64_t)seq->valuedouble, (int64_t)i + 1);
        completed += strcmp(bt_live_type((*lines)[i]), "turn.completed") == 0;
    }
    assert_string_equal(bt_live_type((*lines)[0]), "turn.started");
    assert_string_equal(bt_live_type((*lines)[n - 1]), "turn.completed");
    assert_int_equal(completed, 1);
    return n;
}

const char *bt_live_status(cJSON **lines, size_t n)
{
    return bt_test_jstr(lines[n - 1], "status");
}

const char *bt_live_item_kind(const cJSON *ev)
{
    return bt_test_jstr(cJSON_GetObjectItem(ev, "item"), "kind");
}

size_t bt_live_message_deltas(cJSON **lines, size_t n)
{
    size_t deltas = 0;
    for (size_t i = 0; i < n; i++)
        deltas += strcmp(bt_live_type(lines[i]), "item.delta") == 0 &&
                  strcmp(bt_live_item_kind(lines[i]), "message") == 0;
    return deltas;
}

const cJSON *bt_live_first(cJSON **lines, size_t n, const char *type)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(bt_live_type(lines[i]), type) == 0)
            return lines[i];
    return NULL;
}

size_t bt_live_json(const char *cwd, const char *const *args, int want_exit, cJSON ***lines)
{
    struct bt_test_result res;
    bt_live_baton(cwd, args, &res, 0);
    assert_int_equal(res.exit_code, want_exit);
    size_t k = bt_live_stream(res.out.data, lines);
    bt_test_result_release(&res);
    return k;
}

size_t bt_live_send(const char *conv, const char *text, int want_exit, cJSON ***lines)
{
    const char *send[] = {"send", "--json", conv, text, NULL};
    return bt_live_json(bt_live.other, send, want_exit, lines);
}

int bt_live_exists(const char *dir, const char *name)
{
    char *p = bt_xasprintf("%s/%s", dir, name);
    struct stat st;
    int rc = stat(p, &st) == 0;
    free(p);
    return rc;
}

/* The completed command item of a stream, or NULL. */
const cJSON *bt_live_command_item(cJSON **lines, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(bt_live_type(lines[i]), "item.completed") == 0 &&
            strcmp(bt_live_item_kind(lines[i]), "command") == 0)
            return cJSON_GetObjectItem(lines[i], "item");
    return NULL;
}

/* The last request the stand-in received. */
char *bt_live_last_request(void)
{
    size_t len;
    char *log = bt_test_slurp(bt_live.log, &len);
    assert_non_null(log);
    while (len && log[len - 1] == '\n')
        log[--len] = '\0';
    char *last = strrchr(log, '\n');
    char *copy = bt_xstrdup(last ? last + 1 : log);
    free(log);
    return copy;
}

void bt_live_tmux(const char *const *args, struct bt_test_result *res)
{
    const char *argv[16] = {"tmux"};
    size_t n = 1;
    for (; args[n - 1] && n < 15; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    struct bt_test_run r = {
        .argv = argv, .env = (const char *const *)bt_live.env, .cwd = bt_live.dir, .timeout_s = 30};
    assert_int_equal(bt_test_exec(&r, res), 0);
}

/* 1 if text holds every needle. */
static int holds_all(const char *text, const char *const *needles)
{
    for (; *needles; needles++)
        if (!strstr(text, *needles))
            return 0;
    return 1;
}

char *bt_live_tmux_wait(const char *session, const char *const *needles, int timeout_s)
{
    char *target = bt_xasprintf("=%s:", session); /* exact session, its current pane */
    const char *args[] = {"capture-pane", "-p", "-t", target, NULL};
    struct bt_test_result res = {0};
    for (int i = 0; i < timeout_s * 4; i++) {
        bt_test_result_release(&res);
        bt_live_tmux(args, &res);
        if (res.exit_code == 0 && holds_all(res.out.data, needles)) {
            free(target);
            char *screen = bt_xstrdup(res.out.data);
            bt_test_result_release(&res);
            return screen;
        }
        usleep(250000);
    }
    print_error("tmux session %s, last screen:\n%s%s\n", session, res.out.data, res.err.data);
    fail_msg("the screen did not show what was expected in %d s", timeout_s);
    return NULL;
}

void bt_live_tmux_submit(const char *session, const char *text)
{
    char *target = bt_xasprintf("=%s:", session); /* exact session, its current pane */
    const char *type[] = {"send-keys", "-t", target, "-l", text, NULL};
    const char *enter[] = {"send-keys", "-t", target, "Enter", NULL};
    const char *shown[] = {text, NULL};
    struct bt_test_result res;
    bt_live_tmux(type, &res);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    free(bt_live_tmux_wait(session, shown, 30)); /* typed text and Enter apart: not a paste */
    bt_live_tmux(enter, &res);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    free(target);
}

int bt_live_request_with(const char *const *needles, int timeout_s)
{
    for (int i = 0; i < timeout_s * 4; i++) {
        char *log = bt_test_slurp(bt_live.log, NULL);
        int found = 0;
        for (char *line = log ? strtok(log, "\n") : NULL; line && !found; line = strtok(NULL, "\n"))
            found = holds_all(line, needles);
        free(log);
        if (found)
            return 1;
        usleep(250000);
    }
    return 0;
}

void bt_live_handoff_scenario(const char *const *run_opts, const char *const *ready)
{
    struct bt_test_result res;
    const char *run[12] = {"run", "--json"};
    size_t n = 2;
    for (; run_opts && *run_opts && n < 10; run_opts++)
        run[n++] = *run_opts;
    run[n++] = "Remember the word PELICAN-ONE please";
    run[n] = NULL;
    bt_live_baton(bt_live.work, run, &res, 0);
    assert_int_equal(res.exit_code, 0);
    cJSON **lines;
    size_t k = bt_live_stream(res.out.data, &lines);
    char *conv = bt_xstrdup(bt_test_jstr(lines[0], "conversation"));
    bt_test_lines_free(lines, k);
    bt_test_result_release(&res);
    const char *send[] = {"send", "--json", conv, "Second turn with ZEBRA-TWO", NULL};
    bt_live_baton(bt_live.other, send, &res, 0);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);

    const char *handoff[] = {"handoff", "--tmux", conv, NULL};
    bt_live_baton(bt_live.other, handoff, &res, 0);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    char *session = bt_xasprintf("baton-%.12s", conv);
    /* the earlier conversation on screen, and the coder ready for input */
    const char *earlier[] = {"PELICAN-ONE", "You said: Second turn with ZEBRA-TWO", NULL};
    free(bt_live_tmux_wait(session, earlier, 90));
    free(bt_live_tmux_wait(session, ready, 90));
    bt_live_tmux_submit(session, "Third turn CHARLIE-THREE");
    /* the typed turn reaches the model with the earlier turns as history */
    const char *history[] = {"PELICAN-ONE", "ZEBRA-TWO", "Third turn CHARLIE-THREE", NULL};
    assert_true(bt_live_request_with(history, 90));
    const char *answered[] = {"You said: Third turn CHARLIE-THREE", NULL};
    free(bt_live_tmux_wait(session, answered, 90));

    const char *ls[] = {"ls", NULL};
    bt_live_baton(bt_live.other, ls, &res, 0);
    assert_non_null(strstr(res.out.data, "transferred"));
    bt_test_result_release(&res);
    const char *again[] = {"send", conv, "not now", NULL};
    bt_live_baton(bt_live.other, again, &res, 0);
    assert_int_equal(res.exit_code, 2);
    bt_test_result_release(&res);
    const char *kill_session[] = {"kill-session", "-t", session, NULL};
    bt_live_tmux(kill_session, &res);
    bt_test_result_release(&res);
    free(session);
    free(conv);
}

/* A port on 127.0.0.1 where nothing listens: one the kernel picked, closed
 * again before use. */
static int closed_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    close(fd);
    return ntohs(a.sin_port);
}

void bt_live_unreachable_scenario(const char *env_script, const char *const *run_opts,
                                  const char *idle_s, const char *reason)
{
    char port[16];
    snprintf(port, sizeof port, "%d", closed_port());
    char *env[32] = {0};
    int k = 0;
    char *why = env_lines(env, (int)BT_ARRAY_SIZE(env), env_script, "unreachable-home", port, &k);
    if (why)
        fail_msg("%s", why);
    int own = k;
    /* the rest of the harness's environment (baton home, coder bin, …) */
    for (size_t i = 0; i < BT_ARRAY_SIZE(bt_live.env) && bt_live.env[i]; i++) {
        size_t key = strcspn(bt_live.env[i], "=") + 1;
        int dup = 0;
        for (int j = 0; j < own; j++)
            dup |= strncmp(env[j], bt_live.env[i], key) == 0;
        if (!dup && k + 1 < (int)BT_ARRAY_SIZE(env))
            env[k++] = bt_xstrdup(bt_live.env[i]);
    }
    const char *argv[16] = {BT_BINARY_DIR "/baton", "run", "--json", "--idle-timeout", idle_s};
    size_t n = 5;
    for (; run_opts && *run_opts && n < 14; run_opts++)
        argv[n++] = *run_opts;
    argv[n++] = "Say hello banana";
    argv[n] = NULL;
    struct bt_test_run r = {
        .argv = argv, .env = (const char *const *)env, .cwd = bt_live.work, .timeout_s = 120};
    struct bt_test_result res;
    int rc = bt_test_exec(&r, &res);
    for (int i = 0; i < k; i++)
        free(env[i]);
    /* every fact first, so a failed check leaks nothing and says what came */
    int timed_out = res.timed_out, code = res.exit_code;
    cJSON **lines = NULL;
    size_t m = rc == 0 && res.out.data ? bt_live_stream(res.out.data, &lines) : 0;
    bt_test_result_release(&res);
    char *status = m ? bt_xstrdup(bt_live_status(lines, m)) : NULL;
    const char *kind = m ? bt_test_jstr(lines[m - 1], "error_kind") : NULL;
    const char *msg = m ? bt_test_jstr(lines[m - 1], "error") : NULL;
    char *retrying = bt_xasprintf("was retrying with no progress for %s s", idle_s);
    /* it said so while it waited: a retry warning came before the end,
     * not only the error after the idle timeout */
    int warned = 0;
    for (size_t i = 0; i + 1 < m; i++) {
        const char *type = bt_test_jstr(lines[i], "type");
        const char *wk = bt_test_jstr(lines[i], "kind");
        warned |= type && strcmp(type, "warning") == 0 && wk && strcmp(wk, "retry") == 0;
    }
    int ok = warned && status && strcmp(status, "failed") == 0 && kind &&
             strcmp(kind, "network_error") == 0 && msg && strstr(msg, reason) &&
             strstr(msg, retrying);
    char *said = bt_xasprintf("exit %d, %s, %s: %s%s", code, status ? status : "(no stream)",
                              kind ? kind : "(no kind)", msg ? msg : "(no error)",
                              warned ? "" : " (no retry warning before it)");
    free(retrying);
    free(status);
    bt_test_lines_free(lines, m);
    assert_int_equal(rc, 0);
    assert_false(timed_out);
    int bad = code != 1 || !ok;
    if (bad)
        printf("unreachable: %s\n", said);
    free(said);
    if (bad)
        fail_msg("the turn did not warn of its retries and fail as network_error naming them");
}

int bt_live_run_processes(void)
{
    char *home = bt_xasprintf("BATON_HOME=%s/baton-home", bt_live.dir);
    DIR *d = opendir("/proc");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 1 || pid == getpid())
            continue;
        char path[64];
        snprintf(path, sizeof path, "/proc/%ld/environ", pid);
        size_t len = 0;
        char *env = bt_test_slurp(path, &len);
        if (!env) /* gone, or not ours to read */
            continue;
        int tagged = 0, ours = 0;
        for (size_t i = 0; i < len; i += strlen(env + i) + 1) {
            tagged |= strncmp(env + i, "BATON_RUN=", 10) == 0;
            ours |= strcmp(env + i, home) == 0;
        }
        free(env);
        n += tagged && ours;
    }
    if (d)
        closedir(d);
    free(home);
    return n;
}

/* 1 once the file at path holds a text delta (up to 30 s: some coders take
 * seconds to start on a loaded machine), else 0. */
static int wait_for_delta(const char *path)
{
    for (int i = 0; i < 1500; i++) {
        char *out = bt_test_slurp(path, NULL);
        int seen = out && strstr(out, "\"type\":\"item.delta\"") != NULL;
        free(out);
        if (seen)
            return 1;
        usleep(20000);
    }
    return 0;
}

void bt_live_interrupt_scenario(const char *const *run_opts)
{
    char *out = bt_xasprintf("%s/interrupt.out", bt_live.dir);
    const char *argv[16] = {BATON, "run", "--json"};
    size_t k = 3;
    for (; run_opts && *run_opts && k < 14; run_opts++)
        argv[k++] = *run_opts;
    argv[k++] = "[[slow]]";
    argv[k] = NULL;
    char *cwd = getcwd(NULL, 0);
    assert_int_equal(chdir(bt_live.work), 0);
    pid_t pid = bt_test_spawn_bg(argv, (const char *const *)bt_live.env, out);
    assert_int_equal(chdir(cwd), 0);
    free(cwd);
    int delta = wait_for_delta(out);
    int running = bt_live_run_processes(); /* the count sees the coder */
    int64_t t0 = bt_mono_ms();
    kill(pid, SIGINT);
    int st;
    waitpid(pid, &st, 0);
    int64_t took = bt_mono_ms() - t0;
    printf("interrupt: baton exited %lld ms after SIGINT\n", (long long)took);
    /* every fact first, so a failed check leaks nothing */
    char *text = bt_test_slurp(out, NULL);
    free(out);
    cJSON **lines = NULL;
    size_t n = text ? bt_live_stream(text, &lines) : 0;
    free(text);
    char *status = n ? bt_xstrdup(bt_live_status(lines, n)) : NULL;
    const char *final = n ? bt_test_jstr(lines[n - 1], "final_text") : NULL;
    size_t partial = final ? strlen(final) : 0;
    const char *conv = n ? bt_test_jstr(lines[0], "conversation") : NULL;
    int left = bt_live_run_processes();
    int cancelled = status && strcmp(status, "cancelled") == 0;
    free(status);
    if (conv && (took >= 2000 || !cancelled || left)) {
        /* what the run went through (stop stage, exit, stderr), for the
         * report */
        struct bt_test_result res;
        const char *show[] = {"show", "--debug", conv, NULL};
        bt_live_baton(bt_live.work, show, &res, 0);
        printf("%s\n", res.out.data ? res.out.data : "");
        bt_test_result_release(&res);
    }
    bt_test_lines_free(lines, n);
    assert_true(delta);
    assert_true(running > 0);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 130);
    assert_true(took < 2000); /* cancelled within 2 s */
    assert_true(cancelled);
    assert_true(partial > 0); /* partial text kept */
    assert_int_equal(left, 0);
}
