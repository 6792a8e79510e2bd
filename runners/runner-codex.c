/* SPDX-License-Identifier: MIT */
/*
 * codex runner: handshake, thread start/resume, turn start, interrupt and
 * approval answers for codex app-server. The message order: runner-codex.h.
 */
#include "runner-codex.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coder.h"
#include "error.h"
#include "json.h"
#include "parser-codex-error.h"
#include "parser-codex.h"

struct codex_runner {
    const struct bt_runner_config *cfg;
    char *thread_id;                         /* known after thread/start|resume */
    char *turn_id;                           /* known after turn/start */
    int interrupted;                         /* turn/interrupt sent */
    struct bt_runner_ids ids;                /* requests written and answered */
    int64_t steer_keys[BT_CODEX_STEERS_MAX]; /* the engine's key of each turn/steer */
    int steers;                              /* turn/steer requests written */
    uint64_t steer_answered;                 /* bit per steer whose answer came */
};

static int codex_parse_version(const char *text, char **version)
{
    /* `codex --version` prints "codex-cli 0.171.0" */
    *version = bt_find_version(text);
    return *version ? 0 : BT_EPROTO;
}

static int codex_build_argv(const struct bt_runner_config *cfg, struct bt_strv *argv)
{
    if (cfg->native_session_id && !bt_runner_id_ok(cfg->native_session_id))
        return -EINVAL;
    bt_strv_push(argv, "app-server");
    bt_strv_push(argv, "--listen");
    bt_strv_push(argv, "stdio://");
    return 0;
}

/* codex's terminal UI resuming the thread: `codex resume [--model=M] ID`
 * (codex-cli 0.171.0, `codex resume --help`). */
static int codex_handoff_argv(const struct bt_runner_config *cfg, struct bt_strv *argv)
{
    const char *id = cfg->native_session_id;
    if (!id)
        return -ENOENT;
    if (!bt_runner_id_ok(id) || (cfg->model && cfg->model[0] == '-'))
        return -EINVAL;
    bt_strv_push(argv, "resume");
    if (cfg->model)
        bt_strv_pushf(argv, "--model=%s", cfg->model);
    bt_strv_push(argv, id);
    return 0;
}

/* codex's home: $CODEX_HOME, else ~/.codex (codex-rs core config
 * find_codex_home). */
static int codex_session_root(char **root, char **why)
{
    return bt_runner_home_dir("CODEX_HOME", "", "/.codex", root, why);
}

/* Where codex keeps a thread's rollout: codex 0.171.0 writes it to
 * $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<local time>-<thread id>.jsonl
 * and moves an archived thread's file into $CODEX_HOME/archived_sessions/.
 * The date is not in the id, so the date directories are searched. */
struct rollout_search {
    const char *suffix;    /* "-<thread id>.jsonl" */
    struct bt_strv *found; /* paths of the matching entries */
    int err;               /* first error, 0 if none */
};

/* Append the entries of the directory dir (path for messages) whose names
 * match, of any type (bt_runner_session_file judges them), descending
 * depth more levels of subdirectories. Takes dir. A subdirectory that is
 * a link is not descended: codex makes its date directories itself, and a
 * link there could lead anywhere under CODEX_HOME, which is all the
 * containment check (the session root) can vouch for. */
static void rollout_walk(struct rollout_search *rs, int dir, const char *path, int depth)
{
    DIR *d = fdopendir(dir);
    if (!d) {
        rs->err = rs->err ? rs->err : -errno;
        close(dir);
        return;
    }
    size_t slen = strlen(rs->suffix);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *name = e->d_name;
        size_t n = strlen(name);
        if (name[0] == '.')
            continue;
        if (depth > 0) {
            int sub = openat(dirfd(d), name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
            if (sub < 0)
                continue; /* not a directory: not codex's */
            char *subpath = bt_xasprintf("%s/%s", path, name);
            rollout_walk(rs, sub, subpath, depth - 1);
            free(subpath);
            continue;
        }
        if (n > slen + 8 && strncmp(name, "rollout-", 8) == 0 &&
            strcmp(name + n - slen, rs->suffix) == 0)
            bt_strv_pushf(rs->found, "%s/%s", path, name);
    }
    closedir(d);
}

/* Search home/sub (depth levels of subdirectories) unless it is missing. */
static void rollout_search_in(struct rollout_search *rs, const char *home, const char *sub,
                              int depth)
{
    char *path = bt_xasprintf("%s/%s", home, sub);
    int dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0)
        rollout_walk(rs, dir, path, depth);
    else if (errno != ENOENT && errno != ENOTDIR && !rs->err)
        rs->err = -errno;
    free(path);
}

static int codex_session_files(const struct bt_runner_config *cfg, const char *root,
                               struct bt_strv *files, char **why)
{
    const char *id = cfg->native_session_id;
    *why = NULL;
    if (!id)
        return 0;
    /* the id only ever becomes part of a name compared with directory
     * entries, but one that could be a flag or a path is not codex's */
    if (!bt_runner_id_ok(id) || strstr(id, "..")) {
        *why = bt_xstrdup("it is not a codex thread id");
        return -EINVAL;
    }
    char *suffix = bt_xasprintf("-%s.jsonl", id);
    struct rollout_search rs = {.suffix = suffix, .found = files};
    rollout_search_in(&rs, root, "sessions", 3);
    rollout_search_in(&rs, root, "archived_sessions", 0);
    free(suffix);
    return rs.err;
}

static void *codex_create(const struct bt_runner_config *cfg)
{
    struct codex_runner *r = bt_xcalloc(1, sizeof(*r));
    r->cfg = cfg;
    return r;
}

static void codex_destroy(void *st)
{
    struct codex_runner *r = st;
    if (!r)
        return;
    free(r->thread_id);
    free(r->turn_id);
    free(r);
}

static cJSON *request(struct codex_runner *r, int id, const char *method, cJSON **params)
{
    bt_runner_ids_sent(&r->ids, id);
    cJSON *m = cJSON_CreateObject();
    cJSON_AddNumberToObject(m, "id", id);
    cJSON_AddStringToObject(m, "method", method);
    *params = cJSON_AddObjectToObject(m, "params");
    return m;
}

static void codex_start(void *st, struct bt_buf *out)
{
    struct codex_runner *r = st;
    cJSON *params;
    cJSON *m = request(r, BT_CODEX_ID_INITIALIZE, "initialize", &params);
    bt_runner_add_client_info(params);
    bt_runner_put_json(out, m);
}

static const char *approval_policy(enum bt_approval a)
{
    return a == BT_APPROVAL_NEVER ? "never" : "untrusted";
}

static void send_thread(struct codex_runner *r, struct bt_buf *out)
{
    cJSON *params;
    cJSON *m;
    bt_buf_adds(out, "{\"method\":\"initialized\"}\n");
    if (r->cfg->native_session_id) {
        m = request(r, BT_CODEX_ID_THREAD, "thread/resume", &params);
        cJSON_AddStringToObject(params, "threadId", r->cfg->native_session_id);
        cJSON_AddBoolToObject(params, "excludeTurns", 1);
    } else {
        m = request(r, BT_CODEX_ID_THREAD, "thread/start", &params);
    }
    if (r->cfg->cwd)
        cJSON_AddStringToObject(params, "cwd", r->cfg->cwd);
    cJSON_AddStringToObject(params, "approvalPolicy", approval_policy(r->cfg->approval));
    cJSON_AddStringToObject(params, "sandbox", "workspace-write");
    if (r->cfg->model)
        cJSON_AddStringToObject(params, "model", r->cfg->model);
    bt_runner_put_json(out, m);
}

static void send_turn(struct codex_runner *r, struct bt_buf *out)
{
    cJSON *params;
    cJSON *m = request(r, BT_CODEX_ID_TURN, "turn/start", &params);
    cJSON_AddStringToObject(params, "threadId", r->thread_id);
    bt_runner_add_text_input(params, "input", r->cfg->prompt);
    bt_runner_put_json(out, m);
}

static void on_thread(struct codex_runner *r, const struct bt_signal_response *sig,
                      struct bt_buf *out, const struct bt_parser_sink *sink)
{
    int resumed = r->cfg->native_session_id != NULL;
    if (!sig->is_error && sig->session_id && !bt_runner_id_ok(sig->session_id)) {
        /* it could not be passed back safely on the next turn */
        bt_runner_fail(sink, BT_ERROR_KIND_PROTOCOL_MISMATCH,
                       "codex named a thread id baton cannot use");
        return;
    }
    if (sig->is_error || !sig->session_id) {
        struct bt_buf msg = BT_BUF_INIT;
        bt_buf_addf(&msg, "codex could not %s the thread%s%s", resumed ? "resume" : "start",
                    sig->error_message ? ": " : "", sig->error_message ? sig->error_message : "");
        bt_runner_fail(sink,
                       resumed || bt_codex_thread_gone(sig->error_message)
                           ? BT_ERROR_KIND_RESUME_FAILED
                           : BT_ERROR_KIND_PROTOCOL_MISMATCH,
                       msg.data);
        bt_buf_release(&msg);
        return;
    }
    r->thread_id = bt_xstrdup(sig->session_id);
    struct bt_event ev;
    bt_event_init(&ev, BT_EVENT_SESSION_STARTED);
    ev.native_session_id = r->thread_id;
    ev.resumed = resumed && strcmp(r->thread_id, r->cfg->native_session_id) == 0;
    sink->event(sink->data, &ev);
    send_turn(r, out);
}

/* The answer to turn/steer n: taken (TurnSteerResponse) or refused (an
 * error: the turn ended, or another turn is the active one). */
static int on_steer_response(struct codex_runner *r, const struct bt_signal_response *sig,
                             const struct bt_parser_sink *sink)
{
    int64_t n = sig->id - BT_CODEX_ID_STEER;
    if (n < 0 || n >= r->steers)
        return 0;
    if (r->steer_answered & ((uint64_t)1 << n)) {
        bt_parser_warn(sink, "protocol", "codex answered a steer twice", NULL, 0);
        return 1;
    }
    r->steer_answered |= (uint64_t)1 << n;
    struct bt_signal s = {
        .type = BT_SIGNAL_STEER,
        .steer = {.key = r->steer_keys[n], .taken = !sig->is_error, .message = sig->error_message}};
    sink->signal(sink->data, &s);
    return 1;
}

static void on_response(struct codex_runner *r, const struct bt_signal_response *sig,
                        struct bt_buf *out, const struct bt_parser_sink *sink)
{
    if (on_steer_response(r, sig, sink))
        return;
    if (!bt_runner_ids_first_response(&r->ids, sig->id, BT_CODEX_ID_INITIALIZE,
                                      BT_CODEX_ID_INTERRUPT)) {
        bt_parser_warn(sink, "protocol", "codex answered a request that was not pending", NULL, 0);
        return;
    }
    switch (sig->id) {
    case BT_CODEX_ID_INITIALIZE:
        if (sig->is_error)
            bt_runner_fail(sink, BT_ERROR_KIND_PROTOCOL_MISMATCH,
                           "codex refused the initialize handshake");
        else
            send_thread(r, out);
        break;
    case BT_CODEX_ID_THREAD: on_thread(r, sig, out, sink); break;
    case BT_CODEX_ID_TURN:
        if (sig->is_error) {
            struct bt_buf msg = BT_BUF_INIT;
            bt_buf_addf(&msg, "codex refused the turn: %s",
                        sig->error_message ? sig->error_message : "no reason given");
            /* a thread that is gone is resume_failed, whichever step says so */
            bt_runner_fail(sink,
                           bt_codex_thread_gone(sig->error_message)
                               ? BT_ERROR_KIND_RESUME_FAILED
                               : BT_ERROR_KIND_PROTOCOL_MISMATCH,
                           msg.data);
            bt_buf_release(&msg);
        } else if (sig->turn_id) {
            free(r->turn_id);
            r->turn_id = bt_xstrdup(sig->turn_id);
        }
        break;
    default: /* interrupt acknowledgement, or an id we never sent */ break;
    }
}

/* The decision word for a request method: accept, decline, or cancel
 * (declined because the turn is being stopped: codex interrupts the turn
 * too, CommandExecutionRequestApprovalResponse of codex-cli 0.171.0). */
static const char *decision_word(const char *method, int accept, int cancel)
{
    if (strcmp(method, "execCommandApproval") == 0 || strcmp(method, "applyPatchApproval") == 0)
        /* legacy v1 ReviewDecision; "abort": do nothing until the next command */
        return accept ? "approved" : cancel ? "abort" : "denied";
    return accept ? "accept" : cancel ? "cancel" : "decline";
}

/* item/tool/requestUserInput: every question (by its id) answered
 * (ToolRequestUserInputResponse {answers: {id: {answers: [text]}}},
 * codex-cli 0.171.0; the ids come from the question list the parser
 * made): with the person's answer to it, or, declined, with the one thing
 * baton can say (nobody answers during this turn, or the user declined). */
static void put_answers(cJSON *result, const char *questions_json,
                        const struct bt_runner_decision *d)
{
    cJSON *answers = cJSON_AddObjectToObject(result, "answers");
    cJSON *qs = questions_json ? cJSON_Parse(questions_json) : NULL;
    cJSON *given = d->accept && d->answers_json ? cJSON_Parse(d->answers_json) : NULL;
    const char *refusal = strcmp(d->by, "user") == 0 ? "The user declined to answer this question."
                                                     : BT_RUNNER_NO_ANSWER;
    const cJSON *q;
    int i = 0;
    cJSON_ArrayForEach(q, qs)
    {
        const cJSON *mine = cJSON_GetArrayItem(given, i++);
        const char *id = bt_json_str(q, "id");
        if (!id || cJSON_GetObjectItemCaseSensitive(answers, id))
            continue;
        cJSON *a = cJSON_AddArrayToObject(cJSON_AddObjectToObject(answers, id), "answers");
        const cJSON *s, *list = d->accept && cJSON_IsArray(mine) ? mine : NULL;
        cJSON_ArrayForEach(s, list)
        {
            if (cJSON_IsString(s))
                cJSON_AddItemToArray(a, cJSON_CreateString(s->valuestring));
        }
        if (!d->accept)
            cJSON_AddItemToArray(a, cJSON_CreateString(refusal));
        else if (!cJSON_GetArraySize(a)) /* an absent answer is the empty text */
            cJSON_AddItemToArray(a, cJSON_CreateString(""));
    }
    cJSON_Delete(given);
    cJSON_Delete(qs);
}

static void codex_answer(void *st, const struct bt_signal_request *sig,
                         const struct bt_runner_decision *d, struct bt_buf *out,
                         const struct bt_parser_sink *sink);

static void on_request(struct codex_runner *r, const struct bt_signal_request *sig,
                       struct bt_buf *out, const struct bt_parser_sink *sink)
{
    if (!sig->approval_kind) {
        bt_parser_warn(sink, "unsupported_request", "codex asked for something baton cannot answer",
                       sig->method, strlen(sig->method));
        bt_runner_answer_error(sig, NULL, -32601, "not supported by this client", out);
        return;
    }
    struct bt_runner_decision d;
    bt_runner_policy(r->cfg, sig, &d);
    codex_answer(r, sig, &d, out, sink);
}

/* Only an MCP server's form checks its answers (runner.h answer_problem). */
static char *codex_answer_problem(const struct bt_signal_request *rq, const char *answers_json)
{
    if (strcmp(rq->method, "mcpServer/elicitation/request") != 0)
        return NULL;
    return bt_runner_form_problem(rq, answers_json);
}

/* The answer to a request with an approval kind, as decided (runner.h). */
static void codex_answer(void *st, const struct bt_signal_request *sig,
                         const struct bt_runner_decision *d, struct bt_buf *out,
                         const struct bt_parser_sink *sink)
{
    (void)st;
    int accept = d->accept;
    int cancel = strcmp(d->by, "cancel") == 0;
    cJSON *result = cJSON_CreateObject();
    if (strcmp(sig->method, "mcpServer/elicitation/request") == 0) {
        /* an MCP form: content typed to its requestedSchema (runner-form.c) */
        accept = bt_runner_form_answer(sig, d, result, sink);
    } else if (bt_runner_is_question(sig)) {
        put_answers(result, sig->questions_json, d);
    } else if (strcmp(sig->approval_kind, "permissions") == 0) {
        cJSON *granted = accept && sig->params_json ? cJSON_Parse(sig->params_json) : NULL;
        cJSON_AddItemToObject(result, "permissions", granted ? granted : cJSON_CreateObject());
        cJSON_AddStringToObject(result, "scope", "turn");
    } else {
        cJSON_AddStringToObject(result, "decision", decision_word(sig->method, accept, cancel));
    }
    bt_runner_answer(sig, NULL, result, out);
    bt_runner_resolved(sink, sig, accept, d);
}

static void codex_on_signal(void *st, const struct bt_signal *sig, struct bt_buf *out,
                            const struct bt_parser_sink *sink)
{
    struct codex_runner *r = st;
    if (sig->type == BT_SIGNAL_RESPONSE)
        on_response(r, &sig->response, out, sink);
    else if (sig->type == BT_SIGNAL_REQUEST)
        on_request(r, &sig->request, out, sink);
}

static int codex_interrupt(void *st, struct bt_buf *out)
{
    struct codex_runner *r = st;
    if (!r->thread_id || !r->turn_id || r->interrupted)
        return -ENOTSUP;
    cJSON *params;
    cJSON *m = request(r, BT_CODEX_ID_INTERRUPT, "turn/interrupt", &params);
    cJSON_AddStringToObject(params, "threadId", r->thread_id);
    cJSON_AddStringToObject(params, "turnId", r->turn_id);
    bt_runner_put_json(out, m);
    r->interrupted = 1;
    return 0;
}

/* turn/steer with the turn id codex gave: codex adds the text to that
 * turn if it is still the active one, else answers with an error
 * (on_steer_response). */
static int codex_steer(void *st, int64_t key, const char *text, struct bt_buf *out,
                       const struct bt_parser_sink *sink)
{
    struct codex_runner *r = st;
    (void)sink;
    if (r->interrupted || r->steers >= BT_CODEX_STEERS_MAX)
        return -EAGAIN;
    if (!r->thread_id || !r->turn_id)
        return -EBUSY; /* turn/start has not named the turn yet */
    int n = r->steers++;
    r->steer_keys[n] = key;
    cJSON *m = cJSON_CreateObject();
    cJSON_AddNumberToObject(m, "id", BT_CODEX_ID_STEER + n);
    cJSON_AddStringToObject(m, "method", "turn/steer");
    cJSON *params = cJSON_AddObjectToObject(m, "params");
    cJSON_AddStringToObject(params, "threadId", r->thread_id);
    cJSON_AddStringToObject(params, "expectedTurnId", r->turn_id);
    bt_runner_add_text_input(params, "input", text);
    bt_runner_put_json(out, m);
    return BT_RUNNER_STEER_CONFIRM;
}

const struct bt_runner_ops bt_runner_codex = {
    .bin_name = "codex",
    .bin_env = "BATON_CODEX_BIN",
    .stdin_pipe = 1,
    .reports_version = 1, /* initialize's userAgent (parser-codex.c) */
    .parse_version = codex_parse_version,
    .resolve_launcher = bt_codex_resolve_launcher,
    .build_argv = codex_build_argv,
    .handoff_argv = codex_handoff_argv,
    .session_root = codex_session_root,
    .session_files = codex_session_files,
    .create = codex_create,
    .destroy = codex_destroy,
    .start = codex_start,
    .on_signal = codex_on_signal,
    .answer = codex_answer,
    .answer_problem = codex_answer_problem,
    .interrupt = codex_interrupt,
    .steer = codex_steer,
    .models_argv = bt_codex_models_argv,
    .models_start = bt_codex_models_start,
    .models_line = bt_codex_models_line,
};

/* Where baton finds codex's sessions (codex_session_root). */
static const char *const codex_env_doc[] = {
    "CODEX_HOME",
    "codex's home (default ~/.codex), where `baton rm` finds the codex session it deletes",
    NULL,
};

/* The coder's one registration: src/coders.def lists it. */
const struct bt_coder bt_coder_codex = {
    .name = "codex",
    .runner = &bt_runner_codex,
    .parser = &bt_parser_codex,
    .env_doc = codex_env_doc,
};
