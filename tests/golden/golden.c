/* SPDX-License-Identifier: MIT */
/*
 * golden: parser golden tests. Each recorded coder stdout
 * fixtures/<coder>/<version>/<case>.jsonl is replayed line by line through
 * the coder's parser and runner (as the turn engine would, minus the
 * process), and the normalized events are compared with
 * <case>.events.jsonl. Envelopes are fixed (run "run", conversation "conv",
 * ts 0) so the expected files are stable.
 *
 * usage: golden CODER FIXTURE_DIR [--update]
 *   --update rewrites every <case>.events.jsonl from the current parser.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "coder.h"
#include "framer.h"

struct replay {
    const struct bt_coder *coder;
    void *parser, *runner;
    struct bt_parser_sink sink;
    struct bt_runner_config cfg;
    struct bt_buf events; /* encoded output */
    struct bt_buf writes; /* what the runner would send (discarded) */
    int interrupt;        /* the recording's client sent turn/interrupt */
    char *steer;          /* the text of a steer the recording's client sent, until sent */
    int ended;            /* a final turn end came: the engine reads no more */
    int unexplained;      /* it said failed but not why: the engine asks explain */
    int64_t seq;
};

static void on_event(void *data, const struct bt_event *ev)
{
    struct replay *r = data;
    struct bt_event e = *ev;
    e.seq = ++r->seq;
    e.run = "run";
    e.conversation = "conv";
    e.ts_ms = 0;
    bt_event_to_json(&e, &r->events);
}

static void on_signal(void *data, const struct bt_signal *sig)
{
    struct replay *r = data;
    if (sig->type == BT_SIGNAL_TURN_END) {
        const struct bt_signal_turn_end *e = &sig->turn_end;
        const char *kind = bt_error_kind_name(e->error_kind);
        /* an end that drains: the rest of the recording, written right
         * after it, still counts; then finish closes what is open */
        r->ended |= !e->tentative && !e->drain;
        r->unexplained = e->unexplained;
        bt_buf_addf(&r->events, "#turn-end%s status=%s kind=%s message=%s\n",
                    e->tentative ? " (tentative)"
                    : e->drain   ? " (drain)"
                                 : "",
                    bt_turn_status_name(e->status), kind ? kind : "-",
                    e->message ? e->message : "-");
        return;
    }
    if (sig->type == BT_SIGNAL_TURN_RESUMED) {
        bt_buf_adds(&r->events, "#turn-resumed\n");
        return;
    }
    if (sig->type == BT_SIGNAL_RETRY) {
        const char *kind = bt_error_kind_name(sig->retry.error_kind);
        bt_buf_addf(&r->events, "#retry kind=%s message=%s\n", kind ? kind : "-",
                    sig->retry.message ? sig->retry.message : "-");
        return;
    }
    if (sig->type == BT_SIGNAL_PROGRESS) {
        bt_buf_adds(&r->events, "#progress\n");
        return;
    }
    if (sig->type == BT_SIGNAL_STEER) { /* the runner's word on the steer */
        bt_buf_addf(&r->events, "#steer key=%lld taken=%d message=%s\n", (long long)sig->steer.key,
                    sig->steer.taken, sig->steer.message ? sig->steer.message : "-");
        return;
    }
    if (sig->type == BT_SIGNAL_CODER_VERSION) {
        bt_buf_addf(&r->events, "#coder-version %s\n", sig->coder_version.version);
        return;
    }
    r->coder->runner->on_signal(r->runner, sig, &r->writes, &r->sink);
}

static void on_line(void *data, char *line, size_t len)
{
    struct replay *r = data;
    if (r->ended)
        return; /* e.g. a refused resume: the engine stops the coder there */
    /* interrupt as soon as the runner can, as the recording's client did */
    if (r->interrupt && r->coder->runner->interrupt(r->runner, &r->writes) == 0)
        r->interrupt = 0;
    /* steer as soon as the runner can (the answer, in the recording, is
     * matched by its request id) */
    if (r->steer && r->coder->runner->steer &&
        r->coder->runner->steer(r->runner, 1, r->steer, &r->writes, &r->sink) >= 0) {
        free(r->steer);
        r->steer = NULL;
    }
    r->coder->parser->line(r->parser, line, len, &r->sink);
}

static const struct bt_framer_ops framer_ops = {on_line, NULL};

/* The sessionId of an ACP session/load or session/resume the recording's
 * client sent, copied into buf; NULL when it sent neither. */
static const char *acp_resumed_id(const char *in, char *buf, size_t size)
{
    const char *m = strstr(in, "\"method\":\"session/load\"");
    if (!m)
        m = strstr(in, "\"method\":\"session/resume\"");
    const char *id = m ? strstr(m, "\"sessionId\":\"") : NULL;
    if (!id)
        return NULL;
    id += strlen("\"sessionId\":\"");
    size_t n = strcspn(id, "\"");
    snprintf(buf, size, "%.*s", (int)(n < size ? n : size - 1), id);
    return buf;
}

/* Configure the runner as the recording's client was: <case>.input.jsonl
 * holds what it sent (a thread/resume, approval answers, the policy). */
/* The text of the first steer in the recording's input (codex turn/steer,
 * pi steer), owned; NULL when there is none. */
static char *steer_of(const char *in)
{
    const char *m = strstr(in, "\"turn/steer\"");
    if (!m)
        m = strstr(in, "\"type\":\"steer\"");
    if (!m)
        return NULL;
    const char *eol = strchr(m, '\n');
    const char *line = m;
    while (line > in && line[-1] != '\n')
        line--;
    cJSON *j = cJSON_ParseWithLength(line, eol ? (size_t)(eol - line) : strlen(line));
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(j, "params");
    const char *text =
        p ? cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
                cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(p, "input"), 0), "text"))
          : cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "message"));
    char *copy = text ? bt_xstrdup(text) : NULL;
    cJSON_Delete(j);
    return copy;
}

static void config_from_input(const char *path, struct bt_runner_config *cfg, int *interrupt,
                              char **steer)
{
    static char acp_id[128];
    char *in_path = bt_xasprintf("%.*s.input.jsonl", (int)(strlen(path) - 6), path);
    char *in = bt_read_file(in_path, NULL);
    *interrupt =
        in && (strstr(in, "\"turn/interrupt\"") || strstr(in, "\"subtype\":\"interrupt\"") ||
               strstr(in, "\"session/cancel\""));
    *steer = in ? steer_of(in) : NULL;
    if (in && strstr(in, "\"thread/resume\""))
        cfg->native_session_id = "resumed-session";
    if (in && acp_resumed_id(in, acp_id, sizeof(acp_id)))
        cfg->native_session_id = acp_id;
    if (in && strstr(in, "\"set_auto_retry\",\"enabled\":false"))
        cfg->no_retry = 1;
    if (in && strstr(in, "\"approvalPolicy\":\"never\""))
        cfg->approval = BT_APPROVAL_NEVER;
    if (in && (strstr(in, "\"decision\":\"accept\"") || strstr(in, "\"decision\":\"approved\"") ||
               strstr(in, "\"behavior\":\"allow\"") ||
               /* ACP: the allow_once option of gemini, opencode, copilot */
               strstr(in, "\"optionId\":\"proceed_once\"") || strstr(in, "\"optionId\":\"once\"") ||
               strstr(in, "\"optionId\":\"allow_once\"")))
        cfg->approval = BT_APPROVAL_AUTO;
    free(in);
    free(in_path);
}

/* What the engine adds to an unexplained end, from the recording's
 * <case>.stderr as the tail (the engine keeps the last 64 KiB). */
static void explain(struct replay *r, const char *path)
{
    if (!r->coder->parser->explain)
        return;
    char *err_path = bt_xasprintf("%.*s.stderr", (int)(strlen(path) - 6), path);
    size_t n = 0;
    char *tail = bt_read_file(err_path, &n);
    enum bt_error_kind kind = BT_ERROR_KIND_MODEL_ERROR;
    struct bt_buf msg = BT_BUF_INIT;
    r->coder->parser->explain(r->parser, tail, tail ? n : 0, &kind, &msg);
    bt_buf_addf(&r->events, "#explain kind=%s message=%s\n", bt_error_kind_name(kind),
                msg.len ? msg.data : "-");
    bt_buf_release(&msg);
    free(tail);
    free(err_path);
}

/* Replay one recording; returns the encoded events (caller frees). */
static char *replay_file(const struct bt_coder *coder, const char *path)
{
    size_t len;
    char *input = bt_read_file(path, &len);
    if (!input)
        return NULL;
    struct replay r = {.coder = coder, .events = BT_BUF_INIT, .writes = BT_BUF_INIT};
    r.cfg.prompt = "prompt";
    r.cfg.cwd = "/work";
    config_from_input(path, &r.cfg, &r.interrupt, &r.steer);
    r.parser = coder->parser->create();
    r.runner = coder->runner->create(&r.cfg);
    r.sink = (struct bt_parser_sink){on_event, on_signal, &r};
    coder->runner->start(r.runner, &r.writes);
    struct bt_framer f;
    bt_framer_init(&f, 0, &framer_ops, &r);
    bt_framer_feed(&f, input, len);
    bt_framer_finish(&f);
    if (coder->parser->finish && !r.ended)
        coder->parser->finish(r.parser, &r.sink);
    if (r.unexplained)
        explain(&r, path);
    bt_framer_release(&f);
    coder->parser->destroy(r.parser);
    coder->runner->destroy(r.runner);
    bt_buf_release(&r.writes);
    free(r.steer);
    free(input);
    return bt_buf_detach(&r.events, NULL);
}

struct golden_case {
    const struct bt_coder *coder;
    char *input;    /* <case>.jsonl */
    char *expected; /* <case>.events.jsonl */
    int update;
};

static void first_difference(const char *got, const char *want)
{
    int line = 1;
    const char *g = got, *w = want;
    while (*g && *g == *w) {
        line += *g == '\n';
        g++, w++;
    }
    const char *gl = g, *wl = w;
    while (gl > got && gl[-1] != '\n')
        gl--;
    while (wl > want && wl[-1] != '\n')
        wl--;
    print_error("first difference at line %d\n  got:  %.300s\n  want: %.300s\n", line, gl, wl);
}

static void test_case(void **state)
{
    struct golden_case *c = *state;
    char *got = replay_file(c->coder, c->input);
    assert_non_null(got);
    if (c->update) {
        FILE *f = fopen(c->expected, "wb");
        assert_non_null(f);
        fputs(got, f);
        fclose(f);
    }
    size_t len;
    char *want = bt_read_file(c->expected, &len);
    if (!want) {
        free(got);
        fail_msg("missing %s (run with --update to create it)", c->expected);
        return;
    }
    if (strcmp(got, want) != 0)
        first_difference(got, want);
    assert_string_equal(got, want);
    free(got);
    free(want);
}

static int is_recording(const char *name)
{
    size_t n = strlen(name);
    return n > 6 && strcmp(name + n - 6, ".jsonl") == 0 && !strstr(name, ".events.") &&
           !strstr(name, ".input.");
}

/* Add every recording under dir (one level of version directories). */
static void collect(const char *dir, struct golden_case **cases, size_t *n,
                    const struct bt_coder *coder, int update)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char *path = bt_xasprintf("%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
            collect(path, cases, n, coder, update);
        } else if (is_recording(e->d_name)) {
            *cases = bt_xrealloc(*cases, (*n + 1) * sizeof(**cases));
            struct golden_case *c = &(*cases)[(*n)++];
            c->coder = coder;
            c->input = bt_xstrdup(path);
            c->expected = bt_xasprintf("%.*s.events.jsonl", (int)(strlen(path) - 6), path);
            c->update = update;
        }
        free(path);
    }
    if (d)
        closedir(d);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: golden CODER FIXTURE_DIR [--update]\n");
        return 2;
    }
    const struct bt_coder *coder = bt_coder_find(argv[1]);
    if (!coder) {
        fprintf(stderr, "golden: unknown coder %s\n", argv[1]);
        return 2;
    }
    int update = argc > 3 && strcmp(argv[3], "--update") == 0;
    struct golden_case *cases = NULL;
    size_t n = 0;
    collect(argv[2], &cases, &n, coder, update);
    if (n == 0) {
        fprintf(stderr, "golden: no recordings under %s\n", argv[2]);
        return 1;
    }
    struct CMUnitTest *tests = bt_xcalloc(n, sizeof(*tests));
    for (size_t i = 0; i < n; i++) {
        tests[i].name = cases[i].input + strlen(argv[2]) + 1;
        tests[i].test_func = test_case;
        tests[i].initial_state = &cases[i];
    }
    int failed = _cmocka_run_group_tests(argv[1], tests, n, NULL, NULL);
    for (size_t i = 0; i < n; i++) {
        free(cases[i].input);
        free(cases[i].expected);
    }
    free(cases);
    free(tests);
    return failed ? 1 : 0;
}
