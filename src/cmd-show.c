/* SPDX-License-Identifier: MIT */
/* cmd-show: `baton show CONV` prints a conversation's messages in order;
 * --debug adds each run's record (exit, error, stderr tail, the size of its
 * raw output); --last N keeps only the last N messages; --raw writes the
 * raw stdout of the last run as the coder wrote it (for re-parsing). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd-args.h"
#include "cmd.h"
#include "error.h"
#include "runfile.h"
#include "store.h"

/* The raw stream of a run ("out" or "err") into out: runs/<run>.<stream>.zst,
 * or the plain file of a run from before schema 4. *where is the file read
 * (the .zst one when there is none; caller frees). Returns 0 or an error
 * of bt_runfile_read (-ENOENT when the run has none). */
static int read_raw(struct bt_store *s, const char *run, const char *stream, struct bt_buf *out,
                    int *truncated, char **where)
{
    static const char *const forms[] = {BT_RUNFILE_SUFFIX, ""};
    int rc = -ENOENT;
    *where = NULL;
    for (size_t i = 0; i < BT_ARRAY_SIZE(forms) && rc == -ENOENT; i++) {
        char *suffix = bt_xasprintf(".%s%s", stream, forms[i]);
        char *path = bt_store_run_file(s, run, suffix);
        rc = path ? bt_runfile_read(path, out, truncated) : -EINVAL;
        if (!*where || rc != -ENOENT) {
            free(*where);
            *where = path;
        } else {
            free(path);
        }
        free(suffix);
    }
    return rc;
}

static void json_conv(struct bt_buf *b, const struct bt_store_conversation *c)
{
    bt_buf_adds(b, "{");
    bt_json_member(b, "id", c->id);
    bt_json_member(b, "title", c->title);
    bt_json_member(b, "coder", c->coder);
    bt_json_member(b, "model", c->model);
    bt_json_member(b, "cwd", c->cwd);
    bt_json_member(b, "native_session_id", c->native_session_id);
    bt_json_member(b, "status", bt_store_conv_status_name(c->status));
    bt_buf_adds(b, "}");
}

static void json_message(struct bt_buf *b, const struct bt_store_message *m)
{
    char ts[32];
    bt_time_rfc3339(m->created_ms, ts);
    bt_buf_addf(b, "{\"id\":%lld,\"seq\":%lld", (long long)m->id, (long long)m->seq);
    bt_json_member(b, "role", bt_store_role_name(m->role));
    bt_json_member(b, "state", bt_store_msg_state_name(m->state));
    bt_json_member(b, "text", m->text);
    bt_json_member(b, "error_kind", m->error_kind);
    bt_json_member(b, "error", m->error_text);
    bt_json_member(b, "run", m->run[0] ? m->run : NULL);
    bt_json_member(b, "created", ts);
    bt_buf_adds(b, "}");
}

static void print_json(const struct bt_store_conversation *c, const struct bt_store_message *v,
                       size_t n)
{
    struct bt_buf b = BT_BUF_INIT;
    bt_buf_adds(&b, "{\"conversation\":");
    json_conv(&b, c);
    bt_buf_adds(&b, ",\"messages\":[");
    for (size_t i = 0; i < n; i++) {
        if (i)
            bt_buf_addc(&b, ',');
        json_message(&b, &v[i]);
    }
    bt_buf_adds(&b, "]}\n");
    fputs(b.data, stdout);
    bt_buf_release(&b);
}

/* Why a run file could not be read, for the user. */
static const char *raw_problem(int rc)
{
    switch (rc) {
    case BT_ECORRUPT: return "the run file is damaged";
    case -EINVAL: return "the run file is not a regular file (a link, a FIFO, a directory)";
    case BT_ETOOBIG: return "the run file holds more than baton reads back";
    default: return bt_strerror(rc);
    }
}

static void print_run(struct bt_store *s, const char *run)
{
    struct bt_store_run r;
    if (bt_store_run_get(s, run, &r) != 0)
        return;
    printf("  [run %s: %s, %s %s", r.id, bt_store_run_state_name(r.state), r.coder,
           r.coder_version ? r.coder_version : "?");
    if (r.state != BT_STORE_RUN_RUNNING)
        printf(", exit %lld", (long long)r.exit_code);
    if (r.exit_signal)
        printf(", signal %d", r.exit_signal);
    if (r.error_kind)
        printf(", %s", r.error_kind);
    printf("]\n");
    struct bt_buf raw = BT_BUF_INIT;
    char *where;
    int truncated = 0, rrc = read_raw(s, r.id, "out", &raw, &truncated, &where);
    const char *early = !truncated                        ? ""
                        : r.state == BT_STORE_RUN_RUNNING ? " so far"
                                                          : ", ended early (baton was killed)";
    if (rrc == 0)
        printf("  [raw stdout: %zu bytes%s in %s]\n", raw.len, early, where);
    else if (rrc != -ENOENT)
        printf("  [raw stdout: %s: %s]\n", where, raw_problem(rrc));
    free(where);
    bt_buf_release(&raw);
    if (r.stderr_tail_len) {
        /* the coder's own colours are noise here, and break NO_COLOR */
        char *tail = bt_strip_ansi(r.stderr_tail, r.stderr_tail_len);
        size_t n = strlen(tail);
        printf("  [stderr tail]\n");
        bt_term_write(stdout, tail, n);
        if (n && tail[n - 1] != '\n')
            putchar('\n');
        free(tail);
    }
    bt_store_run_release(&r);
}

/* label, then text made safe for a terminal, then a newline. */
static void print_field(const char *label, const char *text)
{
    fputs(label, stdout);
    bt_term_write(stdout, text, strlen(text));
    putchar('\n');
}

/* v[0..n) are the last n of total messages. */
static void print_human(struct bt_store *s, const struct bt_store_conversation *c,
                        const struct bt_store_message *v, size_t n, size_t total, int debug)
{
    printf("conversation %s  %s  %s\n", c->id, c->coder, bt_store_conv_status_name(c->status));
    print_field("title: ", c->title);
    print_field("cwd:   ", c->cwd);
    if (c->native_session_id)
        printf("native session: %s\n", c->native_session_id);
    if (n < total)
        printf("(the last %zu of %zu messages)\n", n, total);
    for (size_t i = 0; i < n; i++) {
        const struct bt_store_message *m = &v[i];
        int user = m->role == BT_STORE_ROLE_USER;
        printf("\n%s", user ? "you" : c->coder);
        if (m->state == BT_STORE_MSG_QUEUED) /* the number rm-queued takes */
            printf(" (queued as message %lld)", (long long)m->id);
        else if (m->state != BT_STORE_MSG_COMPLETE)
            printf(" (%s)", bt_store_msg_state_name(m->state));
        print_field(":\n", m->text);
        if (m->error_text)
            print_field("error: ", m->error_text);
        if (debug && !user && m->run[0])
            print_run(s, m->run);
    }
}

/* A positive decimal number that fits in 9 digits, else 0. */
static size_t parse_count(const char *text)
{
    size_t len = strlen(text), v = 0;
    if (len == 0 || len > 9 || strspn(text, "0123456789") != len)
        return 0;
    for (const char *p = text; *p; p++)
        v = v * 10 + (size_t)(*p - '0');
    return v;
}

/* Write the raw stdout of the conversation's last run. */
static int print_raw(struct bt_store *s, const char *conv)
{
    struct bt_store_run r = {0};
    if (bt_store_run_last(s, conv, &r) != 0)
        return bt_fail(BT_EXIT_USAGE, "conversation %s has no run yet", conv);
    struct bt_buf raw = BT_BUF_INIT;
    char *where;
    int truncated = 0, rc = read_raw(s, r.id, "out", &raw, &truncated, &where);
    if (rc == 0 || rc == BT_ECORRUPT)
        fwrite(raw.data, 1, raw.len, stdout);
    if (rc == -ENOENT)
        rc = bt_fail(BT_EXIT_FAILED,
                     "the raw output of run %s is not there (%s): removed, or never "
                     "written",
                     r.id, where);
    else if (rc == BT_ECORRUPT && raw.len)
        rc = bt_fail(BT_EXIT_FAILED,
                     "the raw output of run %s is damaged after the %zu bytes printed", r.id,
                     raw.len);
    else if (rc)
        rc = bt_fail(BT_EXIT_FAILED, "the raw output of run %s cannot be read: %s", r.id,
                     raw_problem(rc));
    else if (truncated && r.state == BT_STORE_RUN_RUNNING)
        fprintf(stderr, "baton: run %s is still running: this is its output so far\n", r.id);
    else if (truncated)
        fprintf(stderr,
                "baton: the raw output of run %s ends early: the baton that ran it was "
                "killed before the end\n",
                r.id);
    free(where);
    bt_buf_release(&raw);
    bt_store_run_release(&r);
    return rc;
}

/* Print the last `last` of the n messages v (all when last is 0; v is NULL
 * when n is 0). */
static void print_tail(struct bt_store *s, const struct bt_store_conversation *c,
                       const struct bt_store_message *v, size_t n, size_t last, int json, int debug)
{
    size_t keep = last && last < n ? last : n;
    const struct bt_store_message *from = n ? v + (n - keep) : v;
    if (json)
        print_json(c, from, keep);
    else
        print_human(s, c, from, keep, n, debug);
}

int bt_cmd_show(int argc, char **argv)
{
    struct bt_args a;
    int json = 0, debug = 0, raw = 0, opt;
    size_t last = 0; /* 0: every message */
    bt_args_init(&a, argc, argv);
    while ((opt = bt_args_next(&a)) > 0) {
        if (opt == 'j') {
            json = 1;
        } else if (opt == 'd') {
            debug = 1;
        } else if (opt == 'r') {
            raw = 1;
        } else if ((last = parse_count(a.value)) == 0) {
            return bt_args_fail(&a, "--last takes a positive number, not '%s'", a.value);
        }
    }
    int rc = opt < 0 ? BT_EXIT_USAGE : bt_args_end(&a);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (raw && (json || debug || last))
        return bt_args_fail(&a, "--raw prints the coder's own output alone: it takes no "
                                "--json, --debug or --last");
    struct bt_store *s;
    char id[BT_ID_SIZE];
    if ((rc = bt_cmd_open_store(&s)) != 0)
        return rc;
    struct bt_store_conversation conv = {0};
    struct bt_store_message *v = NULL;
    size_t n = 0;
    if ((rc = bt_cmd_resolve(s, a.operands[0], id)) == 0) {
        if (raw)
            rc = print_raw(s, id);
        else if (bt_store_conversation_get(s, id, &conv) || bt_store_message_list(s, id, &v, &n))
            rc = bt_fail(BT_EXIT_FAILED, "cannot read conversation %s: %s", id, bt_store_errmsg(s));
        else
            print_tail(s, &conv, v, n, last, json, debug);
    }
    bt_store_message_list_free(v, n);
    bt_store_conversation_release(&conv);
    bt_store_close(s);
    return rc;
}
