/* SPDX-License-Identifier: MIT */
/*
 * fake-acp: a scripted ACP agent (protocol version 1, JSON-RPC 2.0 lines on
 * stdio) standing in for gemini, opencode or copilot in baton's tests. It
 * answers initialize, session/new, session/load (replaying a history first),
 * session/resume, session/set_config_option and session/prompt; what a
 * prompt does is chosen by a marker in the prompt's text:
 *
 *   (none)            a thought, the answer "Hello, world." in two chunks, a
 *                     usage_update, stopReason end_turn
 *   [tool]            an execute tool call, a session/request_permission for
 *                     it (allow_once, allow_always, reject_once); the call
 *                     completes when an allow option was selected, fails
 *                     otherwise; the answer names the outcome
 *   [plan]            a plan update, then the default answer
 *   [unknown]         an update kind and a notification no client knows, an
 *                     update without sessionUpdate, then the default answer
 *   [client-methods]  requests fs/read_text_file and terminal/create (not
 *                     advertised by baton); the answer names the error codes
 *                     that came back
 *   [cancel]          a chunk, then waits for session/cancel; after it, a
 *                     session/request_permission; the answer to it goes to
 *                     stderr; stopReason cancelled
 *   [elicit]          asks the user (elicitation/create, form mode: colour
 *                     a choice of red/blue, count a required integer); the
 *                     answer is "elicitation: ACTION[ CONTENT]", the action
 *                     and the content (JSON) that came back
 *   [hang]            a chunk, then never answers the prompt (not even after
 *                     session/cancel)
 *   [orphan]          as [hang], and first forks a child that ignores
 *                     SIGTERM and holds stdout and stderr open
 *   [error]           an error response {-32603, "Internal error", data:
 *                     {details: "HTTP 500 ..."}}
 *   [rate]            an error response naming HTTP 429
 *   [auth]            an error response with code -32000
 *   [max_tokens], [refusal], [max_turn_requests]   that stopReason
 *   [bogus-stop]      an unknown stopReason
 *   [crash]           writes a network error to stderr and exits 1
 *   [prose-exit]      a message chunk "Error: the model request failed", then
 *                     exits 1 (copilot dying with its failure held)
 *   [empty]           stopReason end_turn and nothing else (gemini-cli 0.61.0
 *                     on a model stream it found invalid)
 *   [empty-stderr]    as [empty], after two stderr lines: a notice, then
 *                     "Error: … 429 … quota …"
 *   [late]            a thought and "Hello, ", the answer end_turn, then
 *                     (right after it) "world." and a usage_update
 *   [twice]           the default answer, then the prompt answered again
 *   [nul]             a message chunk "Hello,\u0000 world." (an escaped NUL
 *                     in the JSON text), stopReason end_turn
 *   [usage-limit]     an error response "You've hit your usage limit. Try
 *                     again at 3:05 PM."
 *
 * Environment:
 *   FAKE_ACP_VERSION=<text>  what --version prints (default "0.61.0")
 *   FAKE_ACP_NO_LOAD         initialize offers no loadSession
 *   FAKE_ACP_RESUME          initialize offers sessionCapabilities.resume
 *   FAKE_ACP_LOG=<file>      append every stdin line received
 *   FAKE_ACP_SESSION_ID=<id> the id session/new gives (default
 *                            "fake-session-1")
 *   FAKE_ACP_NULL_RESULT     session/load and session/resume answer with
 *                            the result null (JSON-RPC allows any value)
 *
 * `fake-acp session delete ID` is opencode's command deleting a session
 * (opencode-ai 1.18.33): it removes the file FAKE_ACP_SESSIONS/ID, prints
 * "Session ID deleted" and exits 0; without that file it prints "Error:
 * Session not found: ID" on stderr and exits 1 (ANSI colours as opencode's),
 * and with FAKE_ACP_DELETE_FAIL not empty "Error: database is locked",
 * exit 2.
 * Each call appends "delete ID in CWD" to FAKE_ACP_LOG.
 */
#include <cjson/cJSON.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static FILE *log_file;
static int cancelled;
static char *prompt_id; /* the pending session/prompt's id, as JSON text */

static void put(cJSON *m)
{
    char *s = cJSON_PrintUnformatted(m);
    printf("%s\n", s);
    fflush(stdout);
    free(s);
    cJSON_Delete(m);
}

static cJSON *msg(void)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "jsonrpc", "2.0");
    return m;
}

static void respond(const char *id, cJSON *result)
{
    cJSON *m = msg();
    cJSON_AddItemToObject(m, "id", cJSON_Parse(id));
    cJSON_AddItemToObject(m, "result", result);
    put(m);
}

static void respond_error(const char *id, int code, const char *message, const char *details)
{
    cJSON *m = msg();
    cJSON_AddItemToObject(m, "id", cJSON_Parse(id));
    cJSON *e = cJSON_AddObjectToObject(m, "error");
    cJSON_AddNumberToObject(e, "code", code);
    cJSON_AddStringToObject(e, "message", message);
    if (details)
        cJSON_AddStringToObject(cJSON_AddObjectToObject(e, "data"), "details", details);
    put(m);
}

/* One session/update notification from JSON text of the update object. */
static void update(const char *json)
{
    cJSON *m = msg();
    cJSON_AddStringToObject(m, "method", "session/update");
    cJSON *p = cJSON_AddObjectToObject(m, "params");
    cJSON_AddStringToObject(p, "sessionId", "fake-session-1");
    cJSON_AddItemToObject(p, "update", cJSON_Parse(json));
    put(m);
}

static void chunk(const char *kind, const char *text)
{
    cJSON *u = cJSON_CreateObject();
    cJSON_AddStringToObject(u, "sessionUpdate", kind);
    cJSON *c = cJSON_AddObjectToObject(u, "content");
    cJSON_AddStringToObject(c, "type", "text");
    cJSON_AddStringToObject(c, "text", text);
    char *s = cJSON_PrintUnformatted(u);
    update(s);
    free(s);
    cJSON_Delete(u);
}

/* Read one line of stdin as JSON; NULL at EOF. */
static cJSON *next(void)
{
    static char *line;
    static size_t cap;
    for (;;) {
        ssize_t n = getline(&line, &cap, stdin);
        if (n < 0)
            return NULL;
        if (log_file) {
            fputs(line, log_file);
            fflush(log_file);
        }
        cJSON *j = cJSON_Parse(line);
        if (j)
            return j;
    }
}

static void handle(cJSON *m);

/* Send a request and handle what comes until its answer; returns the
 * answer (owned) or NULL at EOF. */
static cJSON *ask(int id, const char *method, const char *params)
{
    cJSON *m = msg();
    cJSON_AddNumberToObject(m, "id", id);
    cJSON_AddStringToObject(m, "method", method);
    cJSON_AddItemToObject(m, "params", cJSON_Parse(params));
    put(m);
    cJSON *in;
    while ((in = next())) {
        cJSON *idv = cJSON_GetObjectItem(in, "id");
        if (!cJSON_GetObjectItem(in, "method") && cJSON_IsNumber(idv) && idv->valueint == id)
            return in;
        handle(in);
        cJSON_Delete(in);
    }
    return NULL;
}

static void wait_forever(void)
{
    cJSON *in;
    while ((in = next())) {
        handle(in);
        cJSON_Delete(in);
    }
    for (;;)
        pause(); /* stdin closed: still no answer */
}

static const char *default_answer[] = {"Hello, ", "world."};

static void answer_text(void)
{
    chunk("agent_thought_chunk", "thinking it over");
    for (size_t i = 0; i < 2; i++)
        chunk("agent_message_chunk", default_answer[i]);
    update("{\"sessionUpdate\":\"usage_update\",\"used\":1200,\"size\":128000,"
           "\"cost\":{\"amount\":0.01,\"currency\":\"USD\"}}");
}

static void end(const char *id, const char *stop)
{
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "stopReason", stop);
    respond(id, r);
}

static const char *outcome_of(const cJSON *answer)
{
    const cJSON *res = cJSON_GetObjectItem(answer, "result");
    const cJSON *o = res ? cJSON_GetObjectItem(res, "outcome") : NULL;
    const cJSON *opt = o ? cJSON_GetObjectItem(o, "optionId") : NULL;
    const cJSON *kind = o ? cJSON_GetObjectItem(o, "outcome") : NULL;
    if (opt && cJSON_IsString(opt))
        return opt->valuestring;
    return kind && cJSON_IsString(kind) ? kind->valuestring : "none";
}

#define PERMISSION                                                                                 \
    "{\"sessionId\":\"fake-session-1\",\"toolCall\":{\"toolCallId\":\"call-1\",\"title\":\"ls "    \
    "-la\",\"kind\":\"execute\"},\"options\":[{\"optionId\":\"yes\",\"name\":\"Allow\","           \
    "\"kind\":\"allow_once\"},{\"optionId\":\"always\",\"name\":\"Always\",\"kind\":\"allow_"      \
    "always\"},{\"optionId\":\"no\",\"name\":\"Reject\",\"kind\":\"reject_once\"}]}"

static void do_tool(const char *id)
{
    update("{\"sessionUpdate\":\"tool_call\",\"toolCallId\":\"call-1\",\"title\":\"ls -la\","
           "\"kind\":\"execute\",\"status\":\"pending\",\"rawInput\":{\"command\":\"ls -la\"}}");
    cJSON *a = ask(7, "session/request_permission", PERMISSION);
    const char *o = a ? outcome_of(a) : "none";
    int allowed = strcmp(o, "yes") == 0 || strcmp(o, "always") == 0;
    if (allowed)
        update("{\"sessionUpdate\":\"tool_call_update\",\"toolCallId\":\"call-1\",\"status\":"
               "\"completed\",\"content\":[{\"type\":\"content\",\"content\":{\"type\":\"text\","
               "\"text\":\"file.txt\"}}]}");
    else
        update("{\"sessionUpdate\":\"tool_call_update\",\"toolCallId\":\"call-1\",\"status\":"
               "\"failed\"}");
    char text[64];
    snprintf(text, sizeof(text), "permission outcome: %s", o);
    chunk("agent_message_chunk", text);
    cJSON_Delete(a);
    end(id, "end_turn");
}

static void do_client_methods(const char *id)
{
    cJSON *fs = ask(8, "fs/read_text_file",
                    "{\"sessionId\":\"fake-session-1\",\"path\":\"/etc/hostname\"}");
    cJSON *term =
        ask(9, "terminal/create", "{\"sessionId\":\"fake-session-1\",\"command\":\"ls\"}");
    const cJSON *fe = fs ? cJSON_GetObjectItem(fs, "error") : NULL;
    const cJSON *te = term ? cJSON_GetObjectItem(term, "error") : NULL;
    char text[96];
    snprintf(text, sizeof(text), "fs:%d terminal:%d",
             fe ? cJSON_GetObjectItem(fe, "code")->valueint : 0,
             te ? cJSON_GetObjectItem(te, "code")->valueint : 0);
    chunk("agent_message_chunk", text);
    cJSON_Delete(fs);
    cJSON_Delete(term);
    end(id, "end_turn");
}

static void do_cancel(const char *id)
{
    chunk("agent_message_chunk", "working");
    cJSON *in;
    while (!cancelled && (in = next())) {
        handle(in);
        cJSON_Delete(in);
    }
    cJSON *a = ask(10, "session/request_permission", PERMISSION);
    fprintf(stderr, "fake-acp: permission after cancel: %s\n", a ? outcome_of(a) : "none");
    cJSON_Delete(a);
    end(id, "cancelled");
}

/* [elicit]: asks the user (elicitation/create, form mode: a choice and a
 * required integer) and says in its answer what came back: the action,
 * then the content as JSON when there is one. */
static void do_elicit(const char *id)
{
    cJSON *a = ask(11, "elicitation/create",
                   "{\"sessionId\":\"fake-session-1\",\"mode\":\"form\",\"message\":"
                   "\"Which colour?\",\"requestedSchema\":{\"type\":\"object\","
                   "\"properties\":{\"colour\":{\"type\":\"string\",\"title\":\"Colour\","
                   "\"enum\":[\"red\",\"blue\"],\"enumNames\":[\"Red\",\"Blue\"]},"
                   "\"count\":{\"type\":\"integer\",\"description\":\"How many?\"}},"
                   "\"required\":[\"count\"]}}");
    const cJSON *res = a ? cJSON_GetObjectItemCaseSensitive(a, "result") : NULL;
    const cJSON *action = res ? cJSON_GetObjectItemCaseSensitive(res, "action") : NULL;
    const cJSON *content = res ? cJSON_GetObjectItemCaseSensitive(res, "content") : NULL;
    char *ctext = content ? cJSON_PrintUnformatted(content) : NULL;
    char text[512];
    snprintf(text, sizeof(text), "elicitation: %s%s%s",
             action && cJSON_IsString(action) ? action->valuestring : "no action", ctext ? " " : "",
             ctext ? ctext : "");
    chunk("agent_message_chunk", text);
    free(ctext);
    cJSON_Delete(a);
    end(id, "end_turn");
}

static void orphan(void)
{
    if (fork() == 0) {
        signal(SIGTERM, SIG_IGN);
        for (;;)
            pause(); /* holds stdout and stderr */
    }
}

static void prompt(const char *id, const char *text)
{
    static const char *const stops[] = {"[max_tokens]", "[refusal]", "[max_turn_requests]"};
    if (strstr(text, "[crash]")) {
        fprintf(stderr, "Error: request failed: connect ECONNREFUSED 127.0.0.1:9\n");
        exit(1);
    }
    if (strstr(text, "[prose-exit]")) {
        chunk("agent_message_chunk", "Error: the model request failed");
        exit(1);
    }
    if (strstr(text, "[empty-stderr]")) {
        fprintf(stderr, "Ripgrep is not available. Falling back to GrepTool.\n"
                        "Error: model request failed: 429 RESOURCE_EXHAUSTED quota exceeded\n");
        fflush(stderr);
    }
    if (strstr(text, "[empty]") || strstr(text, "[empty-stderr]")) {
        end(id, "end_turn");
        return;
    }
    if (strstr(text, "[orphan]"))
        orphan();
    if (strstr(text, "[hang]") || strstr(text, "[orphan]")) {
        chunk("agent_message_chunk", "partial");
        wait_forever();
    }
    if (strstr(text, "[tool]")) {
        do_tool(id);
        return;
    }
    if (strstr(text, "[client-methods]")) {
        do_client_methods(id);
        return;
    }
    if (strstr(text, "[cancel]")) {
        do_cancel(id);
        return;
    }
    if (strstr(text, "[elicit]")) {
        do_elicit(id);
        return;
    }
    if (strstr(text, "[error]")) {
        respond_error(id, -32603, "Internal error", "HTTP 500 from the model endpoint");
        return;
    }
    if (strstr(text, "[rate]")) {
        respond_error(id, -32603, "[API Error: 429 Too Many Requests]", NULL);
        return;
    }
    if (strstr(text, "[usage-limit]")) {
        respond_error(id, -32603, "You've hit your usage limit. Try again at 3:05 PM.", NULL);
        return;
    }
    if (strstr(text, "[late]")) {
        chunk("agent_thought_chunk", "thinking it over");
        chunk("agent_message_chunk", default_answer[0]);
        end(id, "end_turn");
        chunk("agent_message_chunk", default_answer[1]);
        update("{\"sessionUpdate\":\"usage_update\",\"used\":1200,\"size\":128000}");
        return;
    }
    if (strstr(text, "[nul]")) {
        /* raw: cJSON cannot hold the NUL it would have to escape */
        printf("{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{\"sessionId\":"
               "\"fake-session-1\",\"update\":{\"sessionUpdate\":\"agent_message_chunk\","
               "\"content\":{\"type\":\"text\",\"text\":\"Hello,\\u0000 world.\"}}}}\n");
        fflush(stdout);
        end(id, "end_turn");
        return;
    }
    if (strstr(text, "[auth]")) {
        respond_error(id, -32000, "Authentication required", NULL);
        return;
    }
    if (strstr(text, "[unknown]")) {
        update("{\"sessionUpdate\":\"mystery_update\",\"stuff\":1}");
        update("{\"noKind\":true}");
        cJSON *m = msg();
        cJSON_AddStringToObject(m, "method", "fake/notice");
        put(m);
    }
    if (strstr(text, "[plan]"))
        update("{\"sessionUpdate\":\"plan\",\"entries\":[{\"content\":\"look\",\"priority\":"
               "\"high\",\"status\":\"completed\"},{\"content\":\"answer\",\"priority\":"
               "\"medium\",\"status\":\"in_progress\"}]}");
    for (size_t i = 0; i < sizeof(stops) / sizeof(stops[0]); i++) {
        if (strstr(text, stops[i])) {
            chunk("agent_message_chunk", "cut");
            char stop[32];
            snprintf(stop, sizeof(stop), "%.*s", (int)strlen(stops[i]) - 2, stops[i] + 1);
            {
                end(id, stop);
                return;
            }
        }
    }
    answer_text();
    end(id, strstr(text, "[bogus-stop]") ? "sleepy" : "end_turn");
    if (strstr(text, "[twice]"))
        end(id, "end_turn");
}

static void initialize(const char *id)
{
    cJSON *r = cJSON_CreateObject();
    cJSON_AddNumberToObject(r, "protocolVersion", 1);
    cJSON *caps = cJSON_AddObjectToObject(r, "agentCapabilities");
    cJSON_AddBoolToObject(caps, "loadSession", getenv("FAKE_ACP_NO_LOAD") == NULL);
    cJSON *sc = cJSON_AddObjectToObject(caps, "sessionCapabilities");
    if (getenv("FAKE_ACP_RESUME"))
        cJSON_AddObjectToObject(sc, "resume");
    cJSON *info = cJSON_AddObjectToObject(r, "agentInfo");
    cJSON_AddStringToObject(info, "name", "fake-acp");
    cJSON_AddStringToObject(info, "version", "0.0.1");
    cJSON_AddArrayToObject(r, "authMethods");
    respond(id, r);
}

static void handle(cJSON *m)
{
    const cJSON *mv = cJSON_GetObjectItem(m, "method");
    const cJSON *idv = cJSON_GetObjectItem(m, "id");
    if (!cJSON_IsString(mv))
        return; /* an answer nobody waits for */
    const char *method = mv->valuestring;
    if (strcmp(method, "session/cancel") == 0) {
        cancelled = 1;
        return;
    }
    if (!idv)
        return;
    char *id = cJSON_PrintUnformatted(idv);
    const cJSON *params = cJSON_GetObjectItem(m, "params");
    if (strcmp(method, "initialize") == 0) {
        initialize(id);
    } else if (strcmp(method, "session/new") == 0) {
        cJSON *r = cJSON_CreateObject();
        const char *sid = getenv("FAKE_ACP_SESSION_ID");
        cJSON_AddStringToObject(r, "sessionId", sid ? sid : "fake-session-1");
        respond(id, r);
    } else if (strcmp(method, "session/load") == 0) {
        /* the history comes back as updates before the answer */
        chunk("user_message_chunk", "an old prompt");
        chunk("agent_message_chunk", "OLD ANSWER FROM HISTORY");
        respond(id, getenv("FAKE_ACP_NULL_RESULT") ? cJSON_CreateNull() : cJSON_CreateObject());
    } else if (strcmp(method, "session/resume") == 0) {
        respond(id, getenv("FAKE_ACP_NULL_RESULT") ? cJSON_CreateNull() : cJSON_CreateObject());
    } else if (strcmp(method, "session/set_config_option") == 0) {
        respond(id, cJSON_CreateObject());
    } else if (strcmp(method, "session/prompt") == 0) {
        const cJSON *p = params ? cJSON_GetObjectItem(params, "prompt") : NULL;
        const cJSON *t = p ? cJSON_GetObjectItem(cJSON_GetArrayItem(p, 0), "text") : NULL;
        free(prompt_id);
        prompt_id = strdup(id);
        prompt(id, t && cJSON_IsString(t) ? t->valuestring : "");
    } else {
        respond_error(id, -32601, "Method not found", NULL);
    }
    free(id);
}

static int delete_session(const char *id)
{
    const char *log = getenv("FAKE_ACP_LOG"), *dir = getenv("FAKE_ACP_SESSIONS");
    FILE *f = log ? fopen(log, "a") : NULL;
    if (f) {
        char cwd[4096];
        fprintf(f, "delete %s in %s\n", id, getcwd(cwd, sizeof cwd) ? cwd : "?");
        fclose(f);
    }
    const char *fail = getenv("FAKE_ACP_DELETE_FAIL");
    if (fail && *fail) {
        fprintf(stderr, "\x1b[91m\x1b[1mError: \x1b[0mdatabase is locked\n");
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir ? dir : ".", id);
    if (strchr(id, '/') || unlink(path) != 0) {
        fprintf(stderr, "\x1b[91m\x1b[1mError: \x1b[0mSession not found: %s\n", id);
        return 1;
    }
    printf("\x1b[92m\x1b[1mSession %s deleted\x1b[0m\n", id);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "session") == 0 && strcmp(argv[2], "delete") == 0)
        return delete_session(argv[3]);
    if (argc > 1 && strcmp(argv[1], "--version") == 0) {
        const char *v = getenv("FAKE_ACP_VERSION");
        printf("%s\n", v ? v : "0.61.0");
        return 0;
    }
    const char *log = getenv("FAKE_ACP_LOG");
    log_file = log ? fopen(log, "a") : NULL;
    cJSON *in;
    while ((in = next())) {
        handle(in);
        cJSON_Delete(in);
    }
    free(prompt_id);
    return 0;
}
