/* SPDX-License-Identifier: MIT */
/* pi runner: argv, session file, commands and UI answers (see runner-pi.h). */
#include "runner-pi.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coder.h"
#include "error.h"
#include "json.h"
#include "parser-pi.h"

struct pi_runner {
    const struct bt_runner_config *cfg;
    int prompted;                         /* the prompt was accepted */
    int aborted;                          /* abort sent */
    int64_t steer_keys[BT_PI_STEERS_MAX]; /* the engine's key of each steer */
    int steers;                           /* steer commands written */
};

static int pi_parse_version(const char *text, char **version)
{
    /* `pi --version` prints "0.73.1" (on stderr) */
    *version = bt_find_version(text);
    return *version ? 0 : BT_EPROTO;
}

/* A value that cannot be taken for a flag or split by pi's argument
 * parser: non-empty, no leading '-', no whitespace or control bytes. */
static int value_ok(const char *v)
{
    if (!v || !*v || *v == '-')
        return 0;
    for (; *v; v++)
        if ((unsigned char)*v <= ' ' || *v == 0x7f)
            return 0;
    return 1;
}

/* pi 0.73.1 takes "--flag value" only ("--flag=value" is refused as an
 * unknown option), so every value is checked by value_ok first. -m accepts
 * "provider/model" as well as a bare model id. */
/* The model and session arguments, shared by the rpc turn and the terminal
 * UI (pi 0.73.1 refuses the --flag=value form). */
static int session_args(const struct bt_runner_config *cfg, struct bt_strv *argv)
{
    const char *path = cfg->native_session_path;
    if (!path || path[0] != '/')
        return -EINVAL; /* always a file path: a bare id can make pi ask on stdin */
    if (cfg->model && !value_ok(cfg->model))
        return -EINVAL;
    if (cfg->model) {
        const char *slash = strchr(cfg->model, '/');
        if (slash && slash != cfg->model && slash[1]) {
            bt_strv_push(argv, "--provider");
            bt_strv_push_take(argv, bt_xstrndup(cfg->model, (size_t)(slash - cfg->model)));
            bt_strv_push(argv, "--model");
            bt_strv_push(argv, slash + 1);
        } else {
            bt_strv_push(argv, "--model");
            bt_strv_push(argv, cfg->model);
        }
    }
    bt_strv_push(argv, "--session");
    bt_strv_push(argv, path);
    return 0;
}

static int pi_build_argv(const struct bt_runner_config *cfg, struct bt_strv *argv)
{
    bt_strv_push(argv, "--mode");
    bt_strv_push(argv, "rpc");
    return session_args(cfg, argv);
}

/* pi's terminal UI on the same session file: `pi --session FILE`. */
static int pi_handoff_argv(const struct bt_runner_config *cfg, struct bt_strv *argv)
{
    return session_args(cfg, argv);
}

/* pi's directory name for a cwd: "--" + the path without its leading '/',
 * with '/', '\\' and ':' replaced by '-', + "--" (getDefaultSessionDir in
 * pi 0.73.1 dist/core/session-manager.js). */
static char *cwd_dir_name(const char *cwd)
{
    struct bt_buf b = BT_BUF_INIT;
    bt_buf_adds(&b, "--");
    for (const char *c = cwd[0] == '/' ? cwd + 1 : cwd; *c; c++)
        bt_buf_addc(&b, (char)(*c == '/' || *c == '\\' || *c == ':' ? '-' : *c));
    bt_buf_adds(&b, "--");
    return bt_buf_detach(&b, NULL);
}

/* Where pi keeps its sessions (pi 0.73.1 dist/main.js, dist/config.js
 * getAgentDir, core/session-manager.js getDefaultSessionDir):
 * $PI_CODING_AGENT_SESSION_DIR, all in one directory; else
 * $PI_CODING_AGENT_DIR/sessions, else ~/.pi/agent/sessions, one directory
 * per cwd below it. *flat says which kind. pi expands a leading "~/" in
 * both variables; so does baton, from HOME. (pi also finds a home in the
 * password database when HOME is unset; baton, like its own store, asks
 * for HOME instead.) */
static int session_root_of(char **root, char **why, int *flat)
{
    static const char *const vars[] = {"PI_CODING_AGENT_SESSION_DIR", "PI_CODING_AGENT_DIR",
                                       "HOME"};
    static const char *const tails[] = {"", "/sessions", "/.pi/agent/sessions"};
    *root = NULL;
    *why = NULL;
    for (size_t i = 0; i < BT_ARRAY_SIZE(vars); i++) {
        const char *v = getenv(vars[i]);
        if (!v || !*v)
            continue;
        const char *home = getenv("HOME");
        int tilde = i < 2 && v[0] == '~' && (v[1] == '/' || !v[1]);
        if (tilde && (!home || home[0] != '/')) {
            *why = bt_xasprintf("%s starts with ~ and HOME is not an absolute path", vars[i]);
            return -EINVAL;
        }
        if (!tilde && v[0] != '/') {
            *why = bt_xasprintf("%s is not an absolute path", vars[i]);
            return -EINVAL;
        }
        *root = bt_xasprintf("%s%s%s", tilde ? home : "", tilde ? v + 1 : v, tails[i]);
        *flat = i == 0;
        return 0;
    }
    *why = bt_xstrdup("neither PI_CODING_AGENT_DIR nor HOME is set");
    return -ENOENT;
}

static int pi_session_root(char **root, char **why)
{
    int flat;
    return session_root_of(root, why, &flat);
}

static int pi_new_session_path(const struct bt_runner_config *cfg, char **path, char **why)
{
    int flat;
    char *root;
    int rc = session_root_of(&root, why, &flat);
    if (rc)
        return rc;
    char *name = flat ? bt_xstrdup("") : cwd_dir_name(cfg->cwd ? cfg->cwd : "/");
    /* the name pi gives its own files: <ISO time, ':' and '.' as '-'>_<id> */
    char ts[32];
    int64_t now = bt_now_ms();
    bt_time_rfc3339(now, ts);
    for (char *c = ts; *c; c++)
        if (*c == ':' || *c == '.')
            *c = '-';
    *path =
        bt_xasprintf("%s/%s%s%s_baton-%lld.jsonl", root, name, flat ? "" : "/", ts, (long long)now);
    free(name);
    free(root);
    return 0;
}

/* The session file baton chose (pi_new_session_path), or the one pi named:
 * only an absolute path whose name ends in ".jsonl" is taken for one
 * (bt_runner_session_file checks where it is). */
static int pi_session_files(const struct bt_runner_config *cfg, const char *root,
                            struct bt_strv *files, char **why)
{
    (void)root;
    *why = NULL;
    const char *path = cfg->native_session_path;
    if (!path)
        return 0;
    size_t n = strlen(path);
    const char *name = strrchr(path, '/');
    if (path[0] != '/' || strlen(name + 1) <= 6 || strcmp(path + n - 6, ".jsonl") != 0) {
        *why = bt_xstrdup("it does not name a pi session file");
        return -EINVAL;
    }
    bt_strv_push(files, path);
    return 0;
}

static void *pi_create(const struct bt_runner_config *cfg)
{
    struct pi_runner *r = bt_xcalloc(1, sizeof(*r));
    r->cfg = cfg;
    return r;
}

static void pi_destroy(void *st)
{
    free(st);
}

static cJSON *command(int id, const char *type)
{
    cJSON *m = cJSON_CreateObject();
    char sid[16];
    snprintf(sid, sizeof(sid), "%d", id);
    cJSON_AddStringToObject(m, "id", sid);
    cJSON_AddStringToObject(m, "type", type);
    return m;
}

/* pi takes commands in order: all of them can go at once. */
static void pi_start(void *st, struct bt_buf *out)
{
    struct pi_runner *r = st;
    bt_runner_put_json(out, command(BT_PI_ID_STATE, "get_state"));
    if (r->cfg->no_retry) {
        cJSON *m = command(BT_PI_ID_RETRY, "set_auto_retry");
        cJSON_AddBoolToObject(m, "enabled", 0);
        bt_runner_put_json(out, m);
    }
    cJSON *p = command(BT_PI_ID_PROMPT, "prompt");
    cJSON_AddStringToObject(p, "message", r->cfg->prompt ? r->cfg->prompt : "");
    bt_runner_put_json(out, p);
}

static void on_state(struct pi_runner *r, const struct bt_signal_response *sig,
                     const struct bt_parser_sink *sink)
{
    if (sig->is_error || !sig->session_id) {
        bt_runner_fail(sink, BT_ERROR_KIND_RESUME_FAILED,
                       "pi could not open the conversation's session");
        return;
    }
    struct bt_event ev;
    bt_event_init(&ev, BT_EVENT_SESSION_STARTED);
    ev.native_session_id = sig->session_id;
    ev.native_session_path = sig->session_path;
    /* resumed when pi reopened the session this conversation had */
    ev.resumed =
        r->cfg->native_session_id && strcmp(r->cfg->native_session_id, sig->session_id) == 0;
    sink->event(sink->data, &ev);
}

static void on_response(struct pi_runner *r, const struct bt_signal_response *sig,
                        const struct bt_parser_sink *sink)
{
    if (sig->id == BT_PI_ID_STATE) {
        on_state(r, sig, sink);
    } else if (sig->id == BT_PI_ID_PROMPT && sig->is_error) {
        struct bt_buf msg = BT_BUF_INIT;
        bt_buf_addf(&msg, "pi refused the prompt: %s",
                    sig->error_message ? sig->error_message : "no reason given");
        bt_runner_fail(sink, BT_ERROR_KIND_PROTOCOL_MISMATCH, msg.data);
        bt_buf_release(&msg);
    } else if (sig->id == BT_PI_ID_PROMPT) {
        r->prompted = 1;
    } else if (sig->id >= BT_PI_ID_STEER && sig->id < BT_PI_ID_STEER + r->steers && sig->is_error) {
        /* success only says pi queued it: USER_TEXT says it was taken */
        struct bt_signal s = {.type = BT_SIGNAL_STEER,
                              .steer = {.key = r->steer_keys[sig->id - BT_PI_ID_STEER],
                                        .message = sig->error_message}};
        sink->signal(sink->data, &s);
    }
    /* set_auto_retry and abort acknowledgements need nothing */
}

/* A dialog answered as decided (runner.h; pi 0.73.1 docs/rpc.md
 * extension_ui_response): a confirm accepted is {"confirmed":true}, a
 * select, input or editor answered gives its `value` (a select: the label
 * chosen; input and editor: the text); anything declined, and every
 * dialog after the stop, is {"cancelled":true}. */
static void pi_answer(void *st, const struct bt_signal_request *sig,
                      const struct bt_runner_decision *d, struct bt_buf *out,
                      const struct bt_parser_sink *sink)
{
    (void)st;
    int accept = d->accept;
    char *value = NULL;
    if (accept && strcmp(sig->method, "confirm") != 0) {
        value = bt_runner_answer_text(d, 0);
        accept = value != NULL; /* a question with no answer given is not answered */
    }
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "type", "extension_ui_response");
    cJSON_AddItemToObject(m, "id", cJSON_Parse(sig->request_id));
    if (value)
        cJSON_AddStringToObject(m, "value", value);
    else if (accept)
        cJSON_AddBoolToObject(m, "confirmed", 1);
    else
        cJSON_AddBoolToObject(m, "cancelled", 1);
    free(value);
    bt_runner_put_json(out, m);
    bt_runner_resolved(sink, sig, accept, d);
}

/* Dialogs (extension_ui_request) by policy: a confirm is an approval:
 * auto confirms it, deny (default) cancels it. select, input and editor
 * are questions (user_input): no policy answers them, so they are
 * cancelled, as is every dialog after the stop. */
static void on_dialog(struct pi_runner *r, const struct bt_signal_request *sig, struct bt_buf *out,
                      const struct bt_parser_sink *sink)
{
    struct bt_runner_decision d;
    bt_runner_policy(r->cfg, sig, &d);
    d.accept = d.accept && strcmp(sig->method, "confirm") == 0;
    pi_answer(r, sig, &d, out, sink);
}

static void pi_on_signal(void *st, const struct bt_signal *sig, struct bt_buf *out,
                         const struct bt_parser_sink *sink)
{
    struct pi_runner *r = st;
    if (sig->type == BT_SIGNAL_RESPONSE)
        on_response(r, &sig->response, sink);
    else if (sig->type == BT_SIGNAL_REQUEST && sig->request.method && sig->request.request_id)
        on_dialog(r, &sig->request, out, sink);
}

static int pi_interrupt(void *st, struct bt_buf *out)
{
    struct pi_runner *r = st;
    if (r->aborted)
        return -ENOTSUP;
    bt_runner_put_json(out, command(BT_PI_ID_ABORT, "abort"));
    r->aborted = 1;
    return 0;
}

static int pi_steer(void *st, int64_t key, const char *text, struct bt_buf *out,
                    const struct bt_parser_sink *sink)
{
    struct pi_runner *r = st;
    (void)sink;
    if (r->aborted || r->steers >= BT_PI_STEERS_MAX)
        return -EAGAIN;
    int n = r->steers++;
    r->steer_keys[n] = key;
    cJSON *m = command(BT_PI_ID_STEER + n, "steer");
    cJSON_AddStringToObject(m, "message", text);
    bt_runner_put_json(out, m);
    return BT_RUNNER_STEER_CONFIRM;
}

/* --- the model list: get_available_models and get_state, in a process
 * of its own that keeps no session (--no-session) ----------------------- */

#define PI_MODELS_LISTED 1u /* get_available_models answered */
#define PI_MODELS_STATE 2u  /* get_state answered */

static void pi_models_argv(struct bt_strv *argv)
{
    bt_strv_push(argv, "--mode");
    bt_strv_push(argv, "rpc");
    bt_strv_push(argv, "--no-session");
}

static void pi_models_start(struct bt_buf *out)
{
    bt_buf_adds(out, "{\"id\":\"models\",\"type\":\"get_available_models\"}\n"
                     "{\"id\":\"state\",\"type\":\"get_state\"}\n");
}

/* "provider/id", as -m takes it (session_args), or NULL (owned). */
static char *model_value(const cJSON *model)
{
    const char *provider = bt_json_str(model, "provider"), *id = bt_json_str(model, "id");
    if (!value_ok(provider) || !value_ok(id) || strchr(provider, '/'))
        return NULL;
    return bt_xasprintf("%s/%s", provider, id);
}

static void add_models(const cJSON *data, struct bt_runner_models *m)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(data, "models"))
    {
        char *value = model_value(it);
        const char *name = bt_json_str(it, "name");
        char *shown =
            name && *name ? bt_xasprintf("%s: %s", bt_json_str(it, "provider"), name) : NULL;
        bt_runner_models_add(m, value, shown);
        free(value);
        free(shown);
    }
}

static int pi_models_line(const char *line, size_t len, struct bt_runner_models *m,
                          struct bt_buf *out, char **why)
{
    (void)out;
    cJSON *msg = bt_json_parse(line, len, NULL);
    const char *type = bt_json_str(msg, "type"), *id = bt_json_str(msg, "id");
    unsigned bit = !id                         ? 0
                   : strcmp(id, "models") == 0 ? PI_MODELS_LISTED
                   : strcmp(id, "state") == 0  ? PI_MODELS_STATE
                                               : 0;
    int rc = 0;
    if (!type || strcmp(type, "response") != 0 || !bit) {
        rc = 0; /* events, and extensions' UI requests */
    } else if (bt_json_has_nul(line, len)) {
        *why = bt_xstrdup("pi's answer holds a NUL character, which baton cannot pass on");
        rc = BT_EPROTO;
    } else if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(msg, "success"))) {
        const char *error = bt_json_str(msg, "error");
        *why = bt_xasprintf("pi answered %s", error ? error : "with an error");
        rc = BT_EPROTO;
    } else {
        const cJSON *data = bt_json_obj(msg, "data");
        if (bit == PI_MODELS_LISTED)
            add_models(data, m);
        else if (!m->current)
            m->current = model_value(bt_json_obj(data, "model"));
        m->answered |= bit;
        rc = m->answered == (PI_MODELS_LISTED | PI_MODELS_STATE);
    }
    cJSON_Delete(msg);
    return rc;
}

const struct bt_runner_ops bt_runner_pi = {
    .bin_name = "pi",
    .bin_env = "BATON_PI_BIN",
    .stdin_pipe = 1,
    .parse_version = pi_parse_version,
    .build_argv = pi_build_argv,
    .handoff_argv = pi_handoff_argv,
    .session_root = pi_session_root,
    .new_session_path = pi_new_session_path,
    .session_files = pi_session_files,
    .create = pi_create,
    .destroy = pi_destroy,
    .start = pi_start,
    .on_signal = pi_on_signal,
    .answer = pi_answer,
    .interrupt = pi_interrupt,
    .steer = pi_steer,
    .models_argv = pi_models_argv,
    .models_start = pi_models_start,
    .models_line = pi_models_line,
};

/* Where pi keeps its session files (pi_session_root). */
static const char *const pi_env_doc[] = {
    "PI_CODING_AGENT_DIR",
    "pi's agent directory (default ~/.pi/agent), where a new pi conversation's session file goes",
    "PI_CODING_AGENT_SESSION_DIR",
    "when set, where pi session files go instead",
    NULL,
};

/* The coder's one registration: src/coders.def lists it. */
const struct bt_coder bt_coder_pi = {
    .name = "pi",
    .runner = &bt_runner_pi,
    .parser = &bt_parser_pi,
    .env_doc = pi_env_doc,
};
