/* SPDX-License-Identifier: MIT */
/* claude runner: argv, session, stdin messages and permission answers (see
 * runner-claude.h). */
#include "runner-claude.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coder.h"
#include "error.h"
#include "json.h"
#include "parser-claude.h"

struct claude_runner {
    const struct bt_runner_config *cfg;
    int interrupted; /* the interrupt control request was sent */
};

static int claude_parse_version(const char *text, char **version)
{
    /* `claude --version` prints "2.1.332 (Claude Code)" */
    *version = text && strstr(text, "Claude Code") ? bt_find_version(text) : NULL;
    return *version ? 0 : BT_EPROTO;
}

/* The session id a transcript path names: its file name without ".jsonl",
 * copied into id (37 bytes); 0, or -EINVAL when it is not a UUID. */
static int id_of_path(const char *path, char id[37])
{
    const char *name = path ? strrchr(path, '/') : NULL;
    if (!name || strlen(name + 1) != 36 + 6 || strcmp(name + 37, ".jsonl") != 0)
        return -EINVAL;
    memcpy(id, name + 1, 36);
    id[36] = '\0';
    return bt_runner_uuid_ok(id) ? 0 : -EINVAL;
}

/* The session to name: the id claude confirmed, else the one baton chose.
 * *resume says whether claude has the session already. */
static int session_of(const struct bt_runner_config *cfg, char id[37], int *resume)
{
    *resume = cfg->native_session_id != NULL;
    if (cfg->native_session_id) {
        /* claude's ids are UUIDs; `--resume` takes any other word as a
         * session title, which could be another conversation's */
        if (!bt_runner_uuid_ok(cfg->native_session_id))
            return -EINVAL;
        snprintf(id, 37, "%s", cfg->native_session_id);
        return 0;
    }
    return id_of_path(cfg->native_session_path, id);
}

static int model_args(const struct bt_runner_config *cfg, struct bt_strv *argv)
{
    if (!cfg->model)
        return 0;
    if (!*cfg->model || cfg->model[0] == '-')
        return -EINVAL;
    bt_strv_push(argv, "--model");
    bt_strv_push(argv, cfg->model);
    return 0;
}

static int claude_build_argv(const struct bt_runner_config *cfg, struct bt_strv *argv)
{
    char id[37];
    int resume;
    int rc = session_of(cfg, id, &resume);
    if (rc)
        return rc;
    static const char *const fixed[] = {
        "-p",        "--output-format",           "stream-json", "--input-format", "stream-json",
        "--verbose", "--include-partial-messages"};
    for (size_t i = 0; i < BT_ARRAY_SIZE(fixed); i++)
        bt_strv_push(argv, fixed[i]);
    if (cfg->approval == BT_APPROVAL_NEVER) {
        bt_strv_push(argv, "--permission-mode");
        bt_strv_push(argv, "bypassPermissions");
    } else { /* hidden in --help but accepted: asks come as can_use_tool */
        bt_strv_push(argv, "--permission-prompt-tool");
        bt_strv_push(argv, "stdio");
    }
    if ((rc = model_args(cfg, argv)) != 0)
        return rc;
    if (cfg->no_retry) { /* claude's retries are an environment setting */
        bt_strv_push(argv, "--settings");
        bt_strv_push(argv, "{\"env\":{\"CLAUDE_CODE_MAX_RETRIES\":\"0\"}}");
    }
    bt_strv_push(argv, resume ? "--resume" : "--session-id");
    bt_strv_push(argv, id);
    return 0;
}

/* claude's terminal UI on the same session: `claude --resume <id>`. */
static int claude_handoff_argv(const struct bt_runner_config *cfg, struct bt_strv *argv)
{
    char id[37];
    int resume;
    if (!cfg->native_session_id && !cfg->native_session_path)
        return -ENOENT;
    int rc = session_of(cfg, id, &resume);
    if (rc == 0)
        rc = model_args(cfg, argv);
    if (rc)
        return rc;
    bt_strv_push(argv, "--resume");
    bt_strv_push(argv, id);
    return 0;
}

/* claude's config directory: $CLAUDE_CONFIG_DIR, else ~/.claude. */
static int config_dir(char **dir, char **why)
{
    const char *v = getenv("CLAUDE_CONFIG_DIR"), *home = getenv("HOME");
    *dir = NULL;
    *why = NULL;
    if (v && *v) {
        if (v[0] != '/') {
            *why = bt_xstrdup("CLAUDE_CONFIG_DIR is not an absolute path");
            return -EINVAL;
        }
        *dir = bt_xstrdup(v);
        return 0;
    }
    if (!home || !*home) {
        *why = bt_xstrdup("neither CLAUDE_CONFIG_DIR nor HOME is set");
        return -ENOENT;
    }
    if (home[0] != '/') {
        *why = bt_xstrdup("HOME is not an absolute path");
        return -EINVAL;
    }
    *dir = bt_xasprintf("%s/.claude", home);
    return 0;
}

/* Transcripts live in <config>/projects, one directory per cwd. */
static int claude_session_root(char **root, char **why)
{
    char *dir;
    int rc = config_dir(&dir, why);
    if (rc)
        return rc;
    *root = bt_xasprintf("%s/projects", dir);
    free(dir);
    return 0;
}

/* A random (version 4) UUID from the kernel's generator. */
static int new_uuid(char out[37])
{
    unsigned char b[16];
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, b, sizeof(b)) : -1;
    if (fd >= 0)
        close(fd);
    if (n != (ssize_t)sizeof(b))
        return -EIO;
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
             b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
    return 0;
}

/* The next character of UTF-8 text *s as a code point, advancing *s; a
 * byte that starts no valid sequence counts as U+FFFD, as a JavaScript
 * string decoded from it would hold. */
static unsigned next_code_point(const unsigned char **s)
{
    const unsigned char *c = *s;
    unsigned cp = 0xFFFD;
    size_t n = c[0] < 0x80             ? 1
               : (c[0] & 0xE0) == 0xC0 ? 2
               : (c[0] & 0xF0) == 0xE0 ? 3
               : (c[0] & 0xF8) == 0xF0 ? 4
                                       : 0;
    size_t ok = n;
    for (size_t i = 1; i < n && ok; i++) /* stops at the NUL too */
        if ((c[i] & 0xC0) != 0x80)
            ok = 0;
    if (ok) {
        cp = n == 1 ? c[0] : c[0] & (0x7F >> n);
        for (size_t i = 1; i < n; i++)
            cp = (cp << 6) | (c[i] & 0x3F);
    }
    *s += ok ? ok : 1;
    return cp;
}

/* claude's directory name for a cwd (its sanitizePath, seen in 2.1.332):
 * every UTF-16 code unit that is not an ASCII letter or digit becomes '-'
 * ("/tmp/a.b_c d" → "-tmp-a-b-c-d", "/tmp/café" → "-tmp-caf-"); a name
 * longer than 200 is cut to 200 and "-<hash>" appended, the hash being the
 * absolute value of the 32-bit djb2 (h = h*31 + unit) of the cwd's UTF-16
 * code units, in base 36. */
static char *cwd_dir_name(const char *cwd)
{
    struct bt_buf name;
    bt_buf_init(&name);
    uint32_t hash = 0;
    for (const unsigned char *s = (const unsigned char *)cwd; *s;) {
        unsigned cp = next_code_point(&s);
        unsigned units[2] = {cp, 0};
        size_t n = 1;
        if (cp >= 0x10000) { /* a surrogate pair */
            units[0] = 0xD800 + ((cp - 0x10000) >> 10);
            units[1] = 0xDC00 + ((cp - 0x10000) & 0x3FF);
            n = 2;
        }
        for (size_t i = 0; i < n; i++) {
            unsigned u = units[i];
            hash = hash * 31u + u;
            if ((u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9'))
                bt_buf_addc(&name, (char)u);
            else
                bt_buf_addc(&name, '-');
        }
    }
    if (name.len > 200) {
        /* Math.abs of the signed 32-bit value */
        uint32_t h = (hash & 0x80000000u) ? (uint32_t)(~hash + 1u) : hash;
        char digits[8];
        size_t k = 0;
        do {
            digits[k++] = "0123456789abcdefghijklmnopqrstuvwxyz"[h % 36];
            h /= 36;
        } while (h);
        name.len = 200;
        name.data[200] = '\0';
        bt_buf_addc(&name, '-');
        while (k)
            bt_buf_addc(&name, digits[--k]);
    }
    return bt_buf_detach(&name, NULL);
}

static int claude_new_session_path(const struct bt_runner_config *cfg, char **path, char **why)
{
    char *root, id[37];
    int rc = claude_session_root(&root, why);
    if (rc)
        return rc;
    if ((rc = new_uuid(id)) != 0) {
        *why = bt_xstrdup("no random bytes for a session id");
        free(root);
        return rc;
    }
    char *name = cwd_dir_name(cfg->cwd ? cfg->cwd : "/");
    *path = bt_xasprintf("%s/%s/%s.jsonl", root, name, id);
    free(name);
    free(root);
    return 0;
}

/* The transcript baton chose, or, without one, <root>/<any>/<id>.jsonl
 * (claude keeps a resumed session in its first directory). */
static int claude_session_files(const struct bt_runner_config *cfg, const char *root,
                                struct bt_strv *files, char **why)
{
    *why = NULL;
    if (cfg->native_session_path) {
        char id[37];
        if (cfg->native_session_path[0] != '/' || id_of_path(cfg->native_session_path, id)) {
            *why = bt_xstrdup("it does not name a claude transcript");
            return -EINVAL;
        }
        /* the file is named after its session: one of another session is
         * never this conversation's */
        if (cfg->native_session_id && strcmp(id, cfg->native_session_id) != 0) {
            *why = bt_xasprintf("it is the transcript of session %s, not of %s", id,
                                cfg->native_session_id);
            return -EINVAL;
        }
        bt_strv_push(files, cfg->native_session_path);
        return 0;
    }
    if (!cfg->native_session_id)
        return 0;
    if (!bt_runner_uuid_ok(cfg->native_session_id)) {
        *why = bt_xstrdup("the session id is not a UUID");
        return -EINVAL;
    }
    DIR *d = opendir(root);
    if (!d)
        return errno == ENOENT ? 0 : -errno;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char *p = bt_xasprintf("%s/%s/%s.jsonl", root, e->d_name, cfg->native_session_id);
        if (access(p, F_OK) == 0)
            bt_strv_push_take(files, p);
        else
            free(p);
    }
    closedir(d);
    return 0;
}

static void *claude_create(const struct bt_runner_config *cfg)
{
    struct claude_runner *r = bt_xcalloc(1, sizeof(*r));
    r->cfg = cfg;
    return r;
}

static void claude_destroy(void *st)
{
    free(st);
}

/* text as one stream-json user message. */
static void user_message(const char *text, struct bt_buf *out)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "type", "user");
    cJSON *msg = cJSON_AddObjectToObject(m, "message");
    cJSON_AddStringToObject(msg, "role", "user");
    cJSON_AddStringToObject(msg, "content", text ? text : "");
    bt_runner_put_json(out, m);
}

/* The prompt. */
static void claude_start(void *st, struct bt_buf *out)
{
    struct claude_runner *r = st;
    user_message(r->cfg->prompt, out);
}

/* {"type":"control_response","response":{"subtype":S,"request_id":ID,...}};
 * the inner object is returned for the caller to fill. */
static cJSON *control_response(cJSON **msg, const char *request_id_json, const char *subtype)
{
    *msg = cJSON_CreateObject();
    cJSON_AddStringToObject(*msg, "type", "control_response");
    cJSON *r = cJSON_AddObjectToObject(*msg, "response");
    cJSON_AddStringToObject(r, "subtype", subtype);
    cJSON *id = cJSON_Parse(request_id_json);
    cJSON_AddItemToObject(r, "request_id", id ? id : cJSON_CreateNull());
    return r;
}

/* Why a can_use_tool was denied, in the words the model reads. */
static const char *deny_message(const struct bt_signal_request *rq, const char *by)
{
    if (strcmp(by, "cancel") == 0)
        return "the user stopped the turn";
    if (strcmp(by, "user") == 0)
        return bt_runner_is_question(rq) ? "the user declined to answer" : "the user declined this";
    if (strcmp(by, "timeout") == 0)
        return "nobody answered in time, so this is declined";
    if (bt_runner_is_question(rq))
        return BT_RUNNER_NO_ANSWER;
    return "baton's approval policy denies this";
}

/* AskUserQuestion answered: its input with `answers`, an object from each
 * question's text to the answer (the labels chosen joined by ", ", or the
 * free text), as Claude Code's AskUserQuestion takes it back through
 * updatedInput (Claude Agent SDK "Handle approvals and user input"). */
static void add_answers(cJSON *input, const struct bt_runner_decision *d)
{
    cJSON *answers = cJSON_CreateObject();
    const cJSON *q;
    size_t i = 0;
    cJSON_ArrayForEach(q, cJSON_GetObjectItemCaseSensitive(input, "questions"))
    {
        const char *text = bt_json_str(q, "question");
        char *a = bt_runner_answer_text(d, i++);
        if (text && !cJSON_GetObjectItemCaseSensitive(answers, text))
            cJSON_AddStringToObject(answers, text, a ? a : "");
        free(a);
    }
    cJSON_DeleteItemFromObjectCaseSensitive(input, "answers");
    cJSON_AddItemToObject(input, "answers", answers);
}

/* can_use_tool answered as decided (runner.h): allow with the input
 * unchanged (a question: with its answers added), or deny with a
 * sentence the model sees; a denial because the turn is being stopped
 * also interrupts (PermissionResult deny {message, interrupt}, Claude
 * Code 2.1.332). */
static void claude_answer(void *st, const struct bt_signal_request *rq,
                          const struct bt_runner_decision *d, struct bt_buf *out,
                          const struct bt_parser_sink *sink)
{
    (void)st;
    cJSON *msg;
    cJSON *resp =
        cJSON_AddObjectToObject(control_response(&msg, rq->request_id, "success"), "response");
    cJSON_AddStringToObject(resp, "behavior", d->accept ? "allow" : "deny");
    if (d->accept) {
        cJSON *input = rq->params_json ? cJSON_Parse(rq->params_json) : NULL;
        if (!cJSON_IsObject(input)) {
            cJSON_Delete(input);
            input = cJSON_CreateObject();
        }
        if (bt_runner_is_question(rq))
            add_answers(input, d);
        cJSON_AddItemToObject(resp, "updatedInput", input);
    } else {
        cJSON_AddStringToObject(resp, "message", deny_message(rq, d->by));
        if (strcmp(d->by, "cancel") == 0)
            cJSON_AddBoolToObject(resp, "interrupt", 1);
    }
    bt_runner_put_json(out, msg);
    /* as approval.requested (parser-claude.c) names no item: the request
     * is about a tool call claude has not shown yet */
    struct bt_signal_request unnamed = *rq;
    unnamed.item_id = NULL;
    bt_runner_resolved(sink, &unnamed, d->accept, d);
}

/* can_use_tool by policy: auto allows, deny refuses; a question
 * (AskUserQuestion) is refused with the reason nobody answers it. Any
 * other request gets an error answer: claude waits for every one. */
static void on_request(struct claude_runner *r, const struct bt_signal *sig, struct bt_buf *out,
                       const struct bt_parser_sink *sink)
{
    cJSON *msg;
    if (strcmp(sig->request.method, "can_use_tool") == 0) {
        struct bt_runner_decision d;
        bt_runner_policy(r->cfg, &sig->request, &d);
        claude_answer(r, &sig->request, &d, out, sink);
        return;
    }
    cJSON *resp = control_response(&msg, sig->request.request_id, "error");
    char *why = bt_xasprintf("baton does not handle control request '%s'", sig->request.method);
    cJSON_AddStringToObject(resp, "error", why);
    free(why);
    bt_runner_put_json(out, msg);
}

/* init named the session: session.started, resumed when it is the one
 * this conversation had. */
static void on_init(struct claude_runner *r, const struct bt_signal *sig,
                    const struct bt_parser_sink *sink)
{
    char chosen[37];
    if (!sig->response.session_id)
        return;
    struct bt_event ev;
    bt_event_init(&ev, BT_EVENT_SESSION_STARTED);
    ev.native_session_id = sig->response.session_id;
    if (id_of_path(r->cfg->native_session_path, chosen) == 0 &&
        strcmp(chosen, sig->response.session_id) == 0)
        ev.native_session_path = r->cfg->native_session_path;
    ev.resumed = r->cfg->native_session_id &&
                 strcmp(r->cfg->native_session_id, sig->response.session_id) == 0;
    sink->event(sink->data, &ev);
}

static void claude_on_signal(void *st, const struct bt_signal *sig, struct bt_buf *out,
                             const struct bt_parser_sink *sink)
{
    struct claude_runner *r = st;
    if (sig->type == BT_SIGNAL_RESPONSE && sig->response.method &&
        strcmp(sig->response.method, "init") == 0)
        on_init(r, sig, sink);
    else if (sig->type == BT_SIGNAL_REQUEST && sig->request.method && sig->request.request_id)
        on_request(r, sig, out, sink);
}

static int claude_interrupt(void *st, struct bt_buf *out)
{
    struct claude_runner *r = st;
    if (r->interrupted)
        return -ENOTSUP;
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "type", "control_request");
    cJSON_AddStringToObject(m, "request_id", "baton-interrupt");
    cJSON_AddStringToObject(cJSON_AddObjectToObject(m, "request"), "subtype", "interrupt");
    bt_runner_put_json(out, m);
    r->interrupted = 1;
    return 0;
}

/* A steer: one more user message on the open stdin. Claude Code 2.1.332
 * queues a user message that comes while it works and runs it once the
 * current one ends, with a `result` for each (observed against the
 * stand-in, docs/claude.md): the turn then waits for that later result,
 * and stdin stays open until it comes. */
static int claude_steer(void *st, int64_t key, const char *text, struct bt_buf *out,
                        const struct bt_parser_sink *sink)
{
    struct claude_runner *r = st;
    (void)key;
    (void)sink;
    if (r->interrupted)
        return -EAGAIN;
    user_message(text, out);
    return BT_RUNNER_STEER_TAKEN_END;
}

const struct bt_runner_ops bt_runner_claude = {
    .bin_name = "claude",
    .bin_env = "BATON_CLAUDE_BIN",
    .stdin_pipe = 1,
    .reports_version = 1,
    .parse_version = claude_parse_version,
    .build_argv = claude_build_argv,
    .handoff_argv = claude_handoff_argv,
    .session_root = claude_session_root,
    .new_session_path = claude_new_session_path,
    .session_files = claude_session_files,
    .create = claude_create,
    .destroy = claude_destroy,
    .start = claude_start,
    .on_signal = claude_on_signal,
    .answer = claude_answer,
    .interrupt = claude_interrupt,
    .steer = claude_steer,
};

/* Where claude keeps its transcripts (claude_session_root). */
static const char *const claude_env_doc[] = {
    "CLAUDE_CONFIG_DIR",
    "claude's configuration directory (default ~/.claude), whose projects/ holds its transcripts",
    NULL,
};

/* The coder's one registration: src/coders.def lists it. */
const struct bt_coder bt_coder_claude = {
    .name = "claude",
    .runner = &bt_runner_claude,
    .parser = &bt_parser_claude,
    .env_doc = claude_env_doc,
};
