/* SPDX-License-Identifier: MIT */
/* cmd-show: `baton show CONV` prints a conversation's messages in order,
 * a running turn's answer as far as it has streamed; --debug adds each
 * run's record (the coder's exit status or signal, error, the end of its
 * stderr, the size of its raw output); --last N keeps only the last N
 * messages; --raw writes the raw stdout of the last run as the coder wrote
 * it (for re-parsing). */
#include <cjson/cJSON.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd-args.h"
#include "cmd-common.h"
#include "cmd.h"
#include "error.h"
#include "render.h"
#include "runfile.h"
#include "store.h"
#include "repo.h"
#include "view.h"

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

static void print_json(const struct bt_store_conversation *c, const struct bt_store_message *v,
                       size_t n)
{
    struct bt_buf b = BT_BUF_INIT;
    bt_buf_adds(&b, "{\"conversation\":"); /* the object ls --json and the API give */
    bt_view_conversation(&b, c);
    bt_buf_adds(&b, ",\"messages\":[");
    for (size_t i = 0; i < n; i++) {
        if (i)
            bt_buf_addc(&b, ',');
        bt_view_message(&b, &v[i], NULL);
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

/* The name of a signal a coder dies of ("TERM"), or NULL. */
static const char *signal_name(int sig)
{
    static const struct {
        int sig;
        const char *name;
    } names[] = {{SIGHUP, "HUP"},   {SIGINT, "INT"},   {SIGQUIT, "QUIT"}, {SIGILL, "ILL"},
                 {SIGTRAP, "TRAP"}, {SIGABRT, "ABRT"}, {SIGBUS, "BUS"},   {SIGFPE, "FPE"},
                 {SIGKILL, "KILL"}, {SIGUSR1, "USR1"}, {SIGSEGV, "SEGV"}, {SIGUSR2, "USR2"},
                 {SIGPIPE, "PIPE"}, {SIGALRM, "ALRM"}, {SIGTERM, "TERM"}, {SIGXCPU, "XCPU"},
                 {SIGXFSZ, "XFSZ"}, {SIGSYS, "SYS"}};
    for (size_t i = 0; i < BT_ARRAY_SIZE(names); i++)
        if (names[i].sig == sig)
            return names[i].name;
    return NULL;
}

/* How the run's coder ended, after ", "; nothing while it runs. Whether
 * baton had to signal it is said apart: codex exits 0 on SIGTERM. */
static void print_exit(const struct bt_store_run *r)
{
    const char *name = signal_name(r->exit_signal);
    if (r->state == BT_STORE_RUN_RUNNING)
        return;
    if (r->exit_signal && name)
        printf(", signal %s", name);
    else if (r->exit_signal)
        printf(", signal %d", r->exit_signal);
    else if (r->exit_code != BT_UNKNOWN)
        printf(", exit %lld", (long long)r->exit_code);
    else if (r->pid == 0)
        printf(", the coder never started");
    else /* recovered: the baton that waited for it was gone */
        printf(", exit unknown");
    if (r->stop_stage > 0)
        printf(", baton sent its group SIG%s", r->stop_stage > 1 ? "KILL" : "TERM");
}

/* What --debug shows of a run's stderr: its last TAIL_LINES lines, at most
 * TAIL_BYTES; the whole of it is in the run's .err.zst file. */
#define TAIL_LINES 20
#define TAIL_BYTES 4096

/* Where the shown part of text[0..n) starts: the last TAIL_LINES lines
 * within TAIL_BYTES (a line that does not fit is cut at a character). */
static size_t tail_start(const char *text, size_t n)
{
    size_t at = n, lines = 0;
    while (at && (text[at - 1] == '\n' || text[at - 1] == '\r'))
        at--; /* line ends at the end start no line to count */
    while (at > 0 && n - at < TAIL_BYTES) {
        if (text[at - 1] == '\n' && ++lines == TAIL_LINES)
            break;
        at--;
    }
    while (at < n && ((unsigned char)text[at] & 0xC0) == 0x80)
        at++; /* not inside a UTF-8 character */
    return at;
}

/* The stored tail of the run's stderr or, when none was stored (the baton
 * running it died, or it still runs), the end of its .err.zst file. */
static void print_stderr(struct bt_store *s, const struct bt_store_run *r)
{
    struct bt_buf err = BT_BUF_INIT;
    char *where = NULL;
    int truncated = 0;
    const char *bytes = r->stderr_tail;
    size_t len = r->stderr_tail_len;
    if (!len && read_raw(s, r->id, "err", &err, &truncated, &where) != -ENOENT) {
        bytes = err.data; /* what a damaged file held before the damage too */
        len = err.len;
    }
    free(where);
    /* the coder's own colours are noise here, and break NO_COLOR */
    char *text = len ? bt_strip_ansi(bytes, len) : NULL;
    size_t n = text ? strlen(text) : 0, from = text ? tail_start(text, n) : 0;
    if (from < n) {
        const char *so_far = r->state == BT_STORE_RUN_RUNNING ? " so far" : "";
        char *file = bt_store_run_file(s, r->id, ".err" BT_RUNFILE_SUFFIX);
        if (from == 0)
            printf("  [stderr%s]\n", so_far);
        else
            printf("  [stderr%s: its last %zu bytes; all of it: zstdcat %s]\n", so_far, n - from,
                   file ? file : "?");
        bt_term_write(stdout, text + from, n - from);
        if (text[n - 1] != '\n')
            putchar('\n');
        free(file);
    }
    free(text);
    bt_buf_release(&err);
}

static void print_run(struct bt_store *s, const char *run)
{
    struct bt_store_run r;
    if (bt_store_run_get(s, run, &r) != 0)
        return;
    printf("  [run %s: %s, %s %s", r.id, bt_view_run_state(r.state, r.waiting), r.coder,
           r.coder_version ? r.coder_version : "?");
    print_exit(&r);
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
    print_stderr(s, &r);
    bt_store_run_release(&r);
}

/* label, then text made safe for a terminal, then a newline. */
static void print_field(const char *label, const char *text)
{
    fputs(label, stdout);
    bt_term_write(stdout, text, strlen(text));
    putchar('\n');
}

/* The questions of a run (user_input approval.requested) and the answers
 * a person gave (their approval.resolved, --approval ask). */
struct run_questions {
    struct bt_strv answered; /* per question answered: its id, then its answers' JSON */
    struct bt_buf open;      /* lines of the questions nobody answered */
    struct bt_buf done;      /* lines of those answered, each with its answer */
};

static int is_question(const struct bt_event *ev)
{
    return ev->approval_kind && strcmp(ev->approval_kind, "user_input") == 0 && ev->request_id;
}

/* First pass: which questions were answered, and with what. */
static int run_answer(void *data, const struct bt_store_event *sev)
{
    struct run_questions *q = data;
    struct bt_event ev;
    struct bt_event_doc *doc;
    if (strcmp(sev->type, "approval.resolved") != 0 ||
        bt_event_parse(sev->data, sev->len, &ev, &doc) != 0)
        return 0;
    if (is_question(&ev) && ev.decision && strcmp(ev.decision, "accept") == 0) {
        bt_strv_push(&q->answered, ev.request_id);
        bt_strv_push(&q->answered, ev.answers_json ? ev.answers_json : "[]");
    }
    bt_event_doc_free(doc);
    return 0;
}

/* The answers JSON of question id, or NULL when it was not answered. */
static const char *answers_of(const struct run_questions *q, const char *id)
{
    for (size_t i = 0; i + 1 < q->answered.n; i += 2)
        if (strcmp(q->answered.v[i], id) == 0)
            return q->answered.v[i + 1];
    return NULL;
}

/* Second pass: each question's lines, in the block they belong to. */
static int run_question(void *data, const struct bt_store_event *sev)
{
    struct run_questions *q = data;
    struct bt_event ev;
    struct bt_event_doc *doc;
    if (strcmp(sev->type, "approval.requested") != 0 ||
        bt_event_parse(sev->data, sev->len, &ev, &doc) != 0)
        return 0;
    if (is_question(&ev)) {
        const char *answers = answers_of(q, ev.request_id);
        struct bt_buf *b = answers ? &q->done : &q->open;
        size_t before = b->len;
        cJSON *qs = ev.questions_json ? cJSON_Parse(ev.questions_json) : NULL;
        cJSON *all = answers ? cJSON_Parse(answers) : NULL;
        const cJSON *one;
        int i = 0;
        cJSON_ArrayForEach(one, qs)
        {
            /* each question, then the answer given to it */
            cJSON *single = cJSON_CreateArray();
            cJSON_AddItemReferenceToArray(single, (cJSON *)one);
            char *text = cJSON_PrintUnformatted(single);
            bt_render_questions(text, b);
            cJSON_free(text);
            cJSON_Delete(single);
            const cJSON *str, *given = cJSON_GetArrayItem(all, i++);
            if (!answers)
                continue;
            bt_buf_adds(b, "-> ");
            const char *sep = ""; /* ", " after the first */
            cJSON_ArrayForEach(str, given)
            {
                if (!cJSON_IsString(str))
                    continue;
                bt_buf_addf(b, "%s%s", sep, str->valuestring);
                sep = ", ";
            }
            bt_buf_addc(b, '\n');
        }
        if (b->len == before) /* a coder that gave only a title */
            bt_buf_addf(b, "%s\n", ev.summary ? ev.summary : "");
        cJSON_Delete(qs);
        cJSON_Delete(all);
    }
    bt_event_doc_free(doc);
    return 0;
}

static void print_lines(const char *head, struct bt_buf *b)
{
    if (!b->len)
        return;
    puts(head);
    for (char *line = b->data, *nl; (nl = strchr(line, '\n')) != NULL; line = nl + 1) {
        *nl = '\0';
        print_field("  ", line);
    }
}

/* What the coder asked the user during run: the transcript shows it under
 * the answer, as the coder asked it; what a person answered during the
 * turn with the answer, what nobody could answer then as such. */
static void print_questions(struct bt_store *s, const char *run)
{
    struct run_questions q = {.open = BT_BUF_INIT, .done = BT_BUF_INIT};
    bt_strv_init(&q.answered);
    if (bt_store_event_each(s, run, 1, run_answer, &q) == 0 &&
        bt_store_event_each(s, run, 1, run_question, &q) == 0) {
        print_lines("you answered:", &q.done);
        char *head = bt_xasprintf("asked you (%s):", BT_RENDER_UNANSWERED);
        print_lines(head, &q.open);
        free(head);
    }
    bt_strv_release(&q.answered);
    bt_buf_release(&q.open);
    bt_buf_release(&q.done);
}

/* bt_store_event_each: the texts of a run's turn.steered events. */
static int run_steer(void *data, const struct bt_store_event *sev)
{
    struct bt_event ev;
    struct bt_event_doc *doc;
    (void)data;
    if (strcmp(sev->type, "turn.steered") != 0 ||
        bt_event_parse(sev->data, sev->len, &ev, &doc) != 0)
        return 0;
    printf("\nyou (into the running turn)");
    print_field(":\n", ev.steer_text ? ev.steer_text : "");
    bt_event_doc_free(doc);
    return 0;
}

/* v[0..n) are the last n of total messages. */
static void print_human(struct bt_store *s, const struct bt_store_conversation *c,
                        const struct bt_store_message *v, size_t n, size_t total, int debug)
{
    printf("conversation %s  %s  %s\n", c->id, c->coder, bt_store_conv_status_name(c->status));
    print_field("title: ", c->title);
    print_field("cwd:   ", c->cwd);
    if (c->worktree.path) {
        const char *b = c->worktree.base;
        int detached = strlen(b) == BT_REPO_OID_SIZE - 1 &&
                       strspn(b, "0123456789abcdef") == BT_REPO_OID_SIZE - 1;
        char *text =
            detached
                ? bt_xasprintf("%s (from commit %.12s, a detached HEAD)", c->worktree.branch, b)
                : bt_xasprintf("%s (from %s at %.12s)", c->worktree.branch, b, c->worktree.start);
        print_field("worktree: ", c->worktree.path);
        print_field("branch:   ", text);
        free(text);
    }
    if (c->native_session_id)
        printf("native session: %s\n", c->native_session_id);
    if (c->group[0])
        printf("group: %s (`baton group show %.12s`)\n", c->group, c->group);
    if (n < total)
        printf("(the last %zu of %zu messages)\n", n, total);
    for (size_t i = 0; i < n; i++) {
        const struct bt_store_message *m = &v[i];
        int user = m->role == BT_STORE_ROLE_USER;
        if (!user && m->run[0]) /* what the user put into the turn, before its answer */
            bt_store_event_each(s, m->run, 1, run_steer, NULL);
        printf("\n%s", user ? "you" : c->coder);
        if (m->state == BT_STORE_MSG_QUEUED) /* the number rm-queued takes */
            printf(" (queued as #%lld)", (long long)m->queue_no);
        else if (m->state == BT_STORE_MSG_STREAMING && c->waiting && !strcmp(m->run, c->last_run))
            printf(" (waiting for a turn slot: no coder runs yet)");
        else if (m->state == BT_STORE_MSG_STREAMING)
            printf(" (streaming: the text so far)");
        else if (m->state != BT_STORE_MSG_COMPLETE)
            printf(" (%s)", bt_store_msg_state_name(m->state));
        print_field(":\n", m->text);
        if (!user && m->run[0])
            print_questions(s, m->run);
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
        return bt_cmd_fail(BT_EXIT_USAGE, "conversation %s has no run yet", conv);
    struct bt_buf raw = BT_BUF_INIT;
    char *where;
    int truncated = 0, rc = read_raw(s, r.id, "out", &raw, &truncated, &where);
    if (rc == 0 || rc == BT_ECORRUPT)
        fwrite(raw.data, 1, raw.len, stdout);
    if (rc == -ENOENT)
        rc = bt_cmd_fail(BT_EXIT_FAILED,
                         "the raw output of run %s is not there (%s): removed, or never "
                         "written",
                         r.id, where);
    else if (rc == BT_ECORRUPT && raw.len)
        rc = bt_cmd_fail(BT_EXIT_FAILED,
                         "the raw output of run %s is damaged after the %zu bytes printed", r.id,
                         raw.len);
    else if (rc)
        rc = bt_cmd_fail(BT_EXIT_FAILED, "the raw output of run %s cannot be read: %s", r.id,
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

/* A streaming answer's text is stored only when its run ends: give it the
 * text its run's events hold so far (what attach shows). */
static int fill_streaming(struct bt_store *s, struct bt_store_message *m)
{
    char *text;
    if (m->state != BT_STORE_MSG_STREAMING || !m->run[0] || m->text[0])
        return 0;
    int rc = bt_store_run_answer(s, m->run, &text);
    if (rc == 0) {
        free(m->text);
        m->text = text;
    }
    return rc;
}

/* Print the last `last` of the n messages v (all when last is 0; v is NULL
 * when n is 0). */
static int print_tail(struct bt_store *s, const struct bt_store_conversation *c,
                      struct bt_store_message *v, size_t n, size_t last, int json, int debug)
{
    size_t keep = last && last < n ? last : n;
    struct bt_store_message *from = n ? v + (n - keep) : v;
    for (size_t i = 0; i < keep; i++)
        if (fill_streaming(s, &from[i]))
            return bt_cmd_fail(BT_EXIT_FAILED, "cannot read the running turn of %s: %s", c->id,
                               bt_store_errmsg(s));
    if (json)
        print_json(c, from, keep);
    else
        print_human(s, c, from, keep, n, debug);
    return 0;
}

static const struct bt_opt show_opts[] = {
    {.id = 'j', .name = "json", .help = "the conversation and its messages as one JSON object"},
    {.id = 'd',
     .name = "debug",
     .help = "each answer's run: state, coder version, exit, error\n"
             "kind, the coder's stderr tail and its raw output file"},
    {.id = 'l', .name = "last", .value = "N", .help = "only the last N messages"},
    {.id = 'r', .name = "raw", .help = "the last run's raw coder stdout, as the coder wrote it"},
    {0}};

const struct bt_cmd bt_cmd_def_show = {.name = "show",
                                       .run = bt_cmd_show,
                                       .operands = "CONV",
                                       .summary = "show a conversation's messages and runs",
                                       .opts = show_opts,
                                       .notes = ""};

int bt_cmd_show(int argc, char **argv)
{
    struct bt_args a;
    int json = 0, debug = 0, raw = 0, opt;
    size_t last = 0; /* 0: every message */
    bt_args_init(&a, &bt_cmd_def_show, argc, argv);
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
    if (json && debug)
        return bt_args_fail(&a, "--debug is for the text output: --json has no run records");
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
            rc = bt_cmd_fail(BT_EXIT_FAILED, "cannot read conversation %s: %s", id,
                             bt_store_errmsg(s));
        else
            rc = print_tail(s, &conv, v, n, last, json, debug);
    }
    bt_store_message_list_free(v, n);
    bt_store_conversation_release(&conv);
    bt_store_close(s);
    return rc;
}
