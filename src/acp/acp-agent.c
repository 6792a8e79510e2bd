/* SPDX-License-Identifier: MIT */
/*
 * acp-agent: `baton acp`'s main thread (acp-agent.h): reads the client's
 * lines, answers initialize and routes every other method.
 */
#include "acp-agent.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acp-int.h"
#include "service-conv.h"
#include "framer.h"
#include "json.h"
#include "error.h"
#include "util.h"

/* A client's line is a request or a prompt, far below this; a longer one
 * is refused without being held. */
#define BT_ACP_LINE_MAX ((size_t)64 << 20)

/* The protocol version baton speaks (ACP's ProtocolVersion, an integer). */
#define BT_ACP_PROTOCOL 1

/* ACP's ProtocolVersion: an integer 0..65535 (schema/v1, uint16). */
static int protocol_version_ok(const cJSON *v)
{
    int64_t n = bt_json_int_of(v); /* BT_UNKNOWN (-1) for anything but an integer */
    return n >= 0 && n <= 65535;
}

static void initialize(struct bt_acp *a, const cJSON *id, const cJSON *params)
{
    /* baton answers version 1 whatever was asked (the client decides), but
     * only to a request that asks for one */
    if (!protocol_version_ok(cJSON_GetObjectItemCaseSensitive(params, "protocolVersion"))) {
        bt_acp_error(a, id, BT_ACP_INVALID_PARAMS,
                     "params.protocolVersion (an integer from 0 to 65535) is needed", 0);
        return;
    }
    cJSON *r = cJSON_CreateObject();
    cJSON_AddNumberToObject(r, "protocolVersion", BT_ACP_PROTOCOL);
    cJSON *caps = cJSON_AddObjectToObject(r, "agentCapabilities");
    cJSON_AddBoolToObject(caps, "loadSession", 1);
    /* text, resource links and embedded text resources become the prompt's
     * text; no coder baton drives takes images or audio through it */
    cJSON *pc = cJSON_AddObjectToObject(caps, "promptCapabilities");
    cJSON_AddBoolToObject(pc, "image", 0);
    cJSON_AddBoolToObject(pc, "audio", 0);
    cJSON_AddBoolToObject(pc, "embeddedContext", 1);
    cJSON *sc = cJSON_AddObjectToObject(caps, "sessionCapabilities");
    cJSON_AddObjectToObject(sc, "list");
    cJSON_AddObjectToObject(sc, "resume");
    cJSON_AddObjectToObject(sc, "close");
    cJSON_AddArrayToObject(r, "authMethods");
    cJSON *info = cJSON_AddObjectToObject(r, "agentInfo");
    cJSON_AddStringToObject(info, "name", "baton");
    cJSON_AddStringToObject(info, "title", "baton");
    cJSON_AddStringToObject(info, "version", BATON_VERSION);
    a->initialized = 1;
    bt_acp_result(a, id, r, 0);
}

typedef void (*method_fn)(struct bt_acp *a, const cJSON *id, const cJSON *params);

static const struct {
    const char *name;
    method_fn fn;
} methods[] = {
    {"session/new", bt_acp_session_new},
    {"session/load", bt_acp_session_load},
    {"session/resume", bt_acp_session_resume},
    {"session/list", bt_acp_session_list},
    {"session/set_config_option", bt_acp_session_set_option},
    {"session/close", bt_acp_session_close},
    {"session/prompt", bt_acp_prompt},
};

/* A request (id given) or a notification (id NULL). */
static void dispatch(struct bt_acp *a, const char *method, const cJSON *id, const cJSON *params)
{
    if (strcmp(method, "session/cancel") == 0) {
        bt_acp_cancel(a, params);
        if (id) /* a notification in ACP; sent as a request, JSON-RPC wants an answer */
            bt_acp_result(a, id, NULL, 0);
        return;
    }
    if (strcmp(method, "initialize") == 0) {
        if (id)
            initialize(a, id, params);
        return;
    }
    if (strcmp(method, "authenticate") == 0) {
        if (id) /* baton offers no auth method: each coder has its own login */
            bt_acp_result(a, id, NULL, 0);
        return;
    }
    for (size_t i = 0; i < BT_ARRAY_SIZE(methods); i++) {
        if (strcmp(method, methods[i].name) != 0)
            continue;
        if (!id)
            return; /* a request sent as a notification: nothing to answer */
        if (!a->initialized)
            bt_acp_error(a, id, BT_ACP_INVALID_REQUEST, "send initialize first", 0);
        else if (params && !cJSON_IsObject(params))
            bt_acp_error(a, id, BT_ACP_INVALID_PARAMS, "params must be an object", 0);
        else
            methods[i].fn(a, id, params);
        return;
    }
    if (id) {
        char *msg = bt_xasprintf("baton acp has no method '%s'", method);
        bt_acp_error(a, id, BT_ACP_METHOD_NOT_FOUND, msg, 0);
        free(msg);
    }
}

/* Integers from this on lose digits as cJSON's doubles (2^53 + 1 reads
 * as 2^53): refused as ids. Below it every integer is exact. */
#define BT_ACP_ID_LIMIT 9007199254740992.0 /* 2^53 */

/* 1 if v may be a JSON-RPC id: a string, null, or an integer a double
 * holds exactly (ACP's RequestId: null, int64 or string). */
static int is_id(const cJSON *v)
{
    if (cJSON_IsString(v) || cJSON_IsNull(v))
        return 1;
    if (!cJSON_IsNumber(v) || !(fabs(v->valuedouble) < BT_ACP_ID_LIMIT))
        return 0; /* checked before the cast: a double beyond int64 is undefined */
    return v->valuedouble == (double)(int64_t)v->valuedouble;
}

/* Why msg is not a JSON-RPC 2.0 message baton can read, or NULL
 * (https://www.jsonrpc.org/specification, "Request object"). */
static const char *envelope_problem(const cJSON *msg, const cJSON *id, const cJSON *method)
{
    if (!cJSON_IsObject(msg))
        return "a JSON-RPC message is an object";
    const char *v = bt_json_str(msg, "jsonrpc");
    if (!v || strcmp(v, "2.0") != 0)
        return "a JSON-RPC 2.0 message says \"jsonrpc\": \"2.0\"";
    if (id && !is_id(id))
        return "an id is a string or an integer below 2^53 in size";
    if (method && !cJSON_IsString(method))
        return "a method is a string";
    if (!id && !method)
        return "a message needs a method (a request or a notification) or an id (a response)";
    return NULL;
}

/* Why the text of a message cannot be taken, or NULL: cJSON reads bytes
 * as they come, so what JSON forbids is looked for here. */
static const char *text_problem(const char *line, size_t len)
{
    /* raw or escaped, a NUL ends cJSON's strings: they would read cut short */
    if (bt_json_has_nul(line, len))
        return "a string holds a NUL character, which baton cannot take";
    if (bt_utf8_invalid_at(line, len) < len)
        return "the message is not UTF-8 text (RFC 8259 asks for it)";
    return NULL;
}

/* 1 if only JSON whitespace is left from p to end. */
static int only_space(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
        p++;
    return p == end;
}

static void on_line(void *data, char *line, size_t len)
{
    struct bt_acp *a = data;
    if (only_space(line, line + len))
        return;
    const char *end = NULL;
    cJSON *msg = cJSON_ParseWithLengthOpts(line, len, &end, 0); /* strict, as serve's */
    if (!msg || !only_space(end, line + len)) {
        bt_acp_error(a, NULL, BT_ACP_PARSE_ERROR,
                     msg ? "more than one JSON value on a line" : "not JSON", 0);
        cJSON_Delete(msg);
        return;
    }
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
    const cJSON *method = cJSON_GetObjectItemCaseSensitive(msg, "method");
    const char *why = envelope_problem(msg, id, method);
    const char *bad_text = text_problem(line, len);
    /* a request is answered with its own id where it has a usable one; a
     * string id in a message with bad bytes may hold them (or be cut at a
     * NUL): null then, never an id nobody sent */
    const cJSON *answer_to =
        id && method && is_id(id) && (!bad_text || !cJSON_IsString(id)) ? id : NULL;
    if (!why && bad_text) {
        /* a response so is no answer: a permission then waits on, or the
         * policy decides */
        if (id && method)
            bt_acp_error(a, answer_to, BT_ACP_INVALID_PARAMS, bad_text, 0);
    } else if (why) {
        bt_acp_error(a, answer_to, BT_ACP_INVALID_REQUEST, why, 0);
    } else if (method) {
        dispatch(a, method->valuestring, id, cJSON_GetObjectItemCaseSensitive(msg, "params"));
    } else {
        bt_acp_answered(a, msg); /* one baton asked, or dropped */
    }
    cJSON_Delete(msg);
}

static void on_too_long(void *data, size_t dropped)
{
    struct bt_acp *a = data;
    char *msg = bt_xasprintf("a message of over %zu bytes was dropped", dropped);
    bt_acp_error(a, NULL, BT_ACP_INVALID_REQUEST, msg, 0);
    free(msg);
}

static const struct bt_framer_ops framer_ops = {.on_line = on_line, .on_too_long = on_too_long};

/* --- the main loop: stdin, stop signals, a closed stdout ----------------- */

/* Wait until in_fd has bytes (1) or the agent must stop (0): the stop
 * pipe (a signal, a failed write) or out_fd's reader gone. A pipe whose
 * reader has gone says so (POLLERR) before anything is written, so a turn
 * that prints nothing for a while is not left running for nobody; that
 * ends the agent as stdin's end does (only a failed write means output
 * was lost). */
static int wait_input(struct bt_acp *a, int in_fd)
{
    struct pollfd p[3] = {{.fd = in_fd, .events = POLLIN},
                          {.fd = a->stop_pipe[0], .events = POLLIN},
                          {.fd = a->out_fd, .events = 0}};
    for (;;) {
        if (atomic_load(&a->signo) || atomic_load(&a->out_gone))
            return 0;
        int n = poll(p, 3, -1);
        if (n < 0 && errno != EINTR)
            return 1; /* read() says what is wrong */
        if (atomic_load(&a->signo) || atomic_load(&a->out_gone))
            return 0;
        if (n > 0 && p[0].revents)
            return 1; /* what is left to read first: the client may have said goodbye */
        if (n > 0 && (p[2].revents & (POLLERR | POLLHUP | POLLNVAL)))
            return 0;
    }
}

/* Read the client until its end, a stop signal or a closed stdout. */
static void serve(struct bt_acp *a, int in_fd)
{
    struct bt_framer f;
    bt_framer_init(&f, BT_ACP_LINE_MAX, &framer_ops, a);
    char buf[65536];
    while (wait_input(a, in_fd)) {
        ssize_t n = read(in_fd, buf, sizeof buf);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0)
            break;
        bt_framer_feed(&f, buf, (size_t)n);
    }
    if (!atomic_load(&a->signo) && !atomic_load(&a->out_gone))
        bt_framer_finish(&f); /* a last line without its newline */
    bt_framer_release(&f);
}

static void agent_free(struct bt_acp *a)
{
    for (struct bt_acp_session *se = a->sessions, *next; se; se = next) {
        next = se->next;
        bt_acp_session_free(se);
    }
    pthread_cond_destroy(&a->queued);
    bt_acp_asks_free(a);
    pthread_mutex_destroy(&a->lock);
    bt_store_close(a->store);
}

int bt_acp_agent_run(const struct bt_acp_opts *o, int in_fd, int out_fd, struct bt_acp_end *end)
{
    struct bt_acp a = {.opts = o, .out_fd = out_fd};
    /* the stop signals are watched first: one that comes while the store
     * opens is not the default's death */
    int rc = bt_acp_watch_start(&a);
    if (rc) {
        fprintf(stderr, "baton acp: cannot watch for stop signals: %s\n", bt_strerror(rc));
        return rc;
    }
    pthread_mutex_init(&a.lock, NULL);
    pthread_cond_init(&a.queued, NULL);
    struct bt_service_outcome opened = {0};
    rc = bt_service_open(&a.store, bt_acp_say, NULL, &opened);
    if (rc)
        bt_acp_say(NULL, opened.message);
    free(opened.message);
    if (rc == 0) {
        bt_acp_models_init(&a);
        serve(&a, in_fd);
        /* a second signal meanwhile reaches the turns' own watchers: their
         * coders are killed rather than asked */
        bt_acp_prompt_stop_all(&a);
        bt_acp_models_stop(&a); /* stopping is set: a listing stops too */
        /* the answers of stopped turns are written too: they may be lost */
        end->signo = atomic_load(&a.signo);
        end->out_errno = a.out_errno;
        rc = end->signo                 ? BT_ACP_END_SIGNAL
             : atomic_load(&a.out_gone) ? BT_ACP_END_STDOUT
                                        : BT_ACP_END_STDIN;
    }
    bt_acp_watch_stop(&a);
    agent_free(&a);
    return rc;
}
