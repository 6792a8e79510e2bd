/* SPDX-License-Identifier: MIT */
/*
 * bench-drive: the least a client of a coder's JSON-lines protocol must do
 * for one turn, in C, so that `baton run` can be timed against the same
 * turn without baton and without an interpreter starting (bench.sh). It
 * writes the requests baton writes (fixtures/CODER/CASE.input.jsonl), parses
 * every line it reads with cJSON, closes the coder's stdin when the turn
 * has ended and waits for the coder to exit. Exit status 0 when the turn
 * completed, 1 otherwise; the coder's stderr is passed through.
 *
 * usage: bench-drive codex [-m MODEL] PROMPT CODEX
 *          CODEX app-server --listen stdio://; initialize, initialized,
 *          thread/start {cwd, approvalPolicy never, sandbox workspace-write,
 *          model}, turn/start; reads until turn/completed
 *        bench-drive pi [-p PROVIDER] [-m MODEL] -s SESSION_DIR PROMPT PI
 *          PI --mode rpc [--provider P] [--model M] --session <a new file in
 *          SESSION_DIR>; get_state and prompt at once (as baton sends them);
 *          reads until agent_end
 * The working directory is the thread's cwd.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pid_t child = -1;
static int to_child = -1, from_child = -1;
static char *buf;
static size_t len, off, cap;

static void die(const char *msg)
{
    fprintf(stderr, "bench-drive: %s\n", msg);
    if (child > 0)
        kill(child, SIGKILL);
    exit(1);
}

static void spawn(char *const *argv)
{
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0)
        die("pipe failed");
    child = fork();
    if (child < 0)
        die("fork failed");
    if (child == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[0]);
        close(in[1]);
        close(out[0]);
        close(out[1]);
        signal(SIGPIPE, SIG_DFL); /* as a coder started by a shell has it */
        execv(argv[0], argv);
        perror("bench-drive: exec");
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    to_child = in[1];
    from_child = out[0];
}

/* Write one message as a JSON line; takes m. */
static void send_json(cJSON *m)
{
    char *s = cJSON_PrintUnformatted(m);
    cJSON_Delete(m);
    if (!s)
        die("out of memory");
    size_t n = strlen(s);
    char *line = malloc(n + 1);
    if (!line)
        die("out of memory");
    memcpy(line, s, n + 1);
    line[n] = '\n'; /* in place of the NUL: one write for the line */
    free(s);
    for (size_t done = 0; done <= n;) {
        ssize_t w = write(to_child, line + done, n + 1 - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            die("the coder closed its stdin");
        done += (size_t)w;
    }
    free(line);
}

/* The next stdout line of the coder, parsed; NULL at EOF. Lines that are
 * not JSON are skipped. Caller deletes. */
static cJSON *next_json(void)
{
    for (;;) {
        char *nl = len > off ? memchr(buf + off, '\n', len - off) : NULL;
        if (nl) {
            cJSON *j = cJSON_ParseWithLength(buf + off, (size_t)(nl - (buf + off)));
            off = (size_t)(nl - buf) + 1;
            if (j)
                return j;
            continue;
        }
        if (off > 0) {
            memmove(buf, buf + off, len - off);
            len -= off;
            off = 0;
        }
        if (cap - len < 65536) {
            cap = cap ? cap * 2 : 1 << 20;
            buf = realloc(buf, cap);
            if (!buf)
                die("out of memory");
        }
        ssize_t r = read(from_child, buf + len, cap - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return NULL;
        len += (size_t)r;
    }
}

static const char *str(const cJSON *j, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Close the coder's stdin, wait for it; the driver's exit status. */
static int finish(int ok)
{
    close(to_child);
    int status;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR)
        ;
    return ok ? 0 : 1;
}

/* codex: a request id of a response, or -1. */
static int response_id(const cJSON *j)
{
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(j, "id");
    if (!cJSON_IsNumber(id) || cJSON_GetObjectItemCaseSensitive(j, "method"))
        return -1;
    return id->valueint;
}

/* Read until the response to id; returns it (caller deletes) or NULL.
 * A server request is refused so it cannot stall the turn. */
static cJSON *await_response(int id)
{
    cJSON *j;
    while ((j = next_json()) != NULL) {
        if (response_id(j) == id)
            return j;
        const cJSON *rid = cJSON_GetObjectItemCaseSensitive(j, "id");
        if (rid && cJSON_GetObjectItemCaseSensitive(j, "method")) {
            cJSON *a = cJSON_CreateObject();
            cJSON_AddItemToObject(a, "id", cJSON_Duplicate(rid, 1));
            cJSON *e = cJSON_AddObjectToObject(a, "error");
            cJSON_AddNumberToObject(e, "code", -32601);
            cJSON_AddStringToObject(e, "message", "bench-drive answers no requests");
            send_json(a);
        }
        cJSON_Delete(j);
    }
    return NULL;
}

static cJSON *request(int id, const char *method, cJSON **params)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddNumberToObject(m, "id", id);
    cJSON_AddStringToObject(m, "method", method);
    *params = cJSON_AddObjectToObject(m, "params");
    return m;
}

static int drive_codex(const char *model, const char *prompt, char *bin)
{
    char *argv[] = {bin, "app-server", "--listen", "stdio://", NULL};
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof(cwd)))
        die("getcwd failed");
    spawn(argv);
    cJSON *params;
    cJSON *m = request(1, "initialize", &params);
    cJSON *info = cJSON_AddObjectToObject(params, "clientInfo");
    cJSON_AddStringToObject(info, "name", "bench-drive");
    cJSON_AddStringToObject(info, "title", "bench-drive");
    cJSON_AddStringToObject(info, "version", "0.1.0");
    send_json(m);
    cJSON *r = await_response(1);
    if (!r || cJSON_GetObjectItemCaseSensitive(r, "error"))
        return finish(0);
    cJSON_Delete(r);
    m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "method", "initialized");
    send_json(m);
    m = request(2, "thread/start", &params);
    cJSON_AddStringToObject(params, "cwd", cwd);
    cJSON_AddStringToObject(params, "approvalPolicy", "never");
    cJSON_AddStringToObject(params, "sandbox", "workspace-write");
    if (model)
        cJSON_AddStringToObject(params, "model", model);
    send_json(m);
    r = await_response(2);
    const cJSON *thread =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, "result"), "thread");
    const char *tid = str(thread, "id");
    if (!tid) {
        cJSON_Delete(r);
        return finish(0);
    }
    m = request(3, "turn/start", &params);
    cJSON_AddStringToObject(params, "threadId", tid);
    cJSON *input = cJSON_AddArrayToObject(params, "input");
    cJSON *text = cJSON_CreateObject();
    cJSON_AddStringToObject(text, "type", "text");
    cJSON_AddStringToObject(text, "text", prompt);
    cJSON_AddItemToArray(input, text);
    send_json(m);
    cJSON_Delete(r);
    int ok = 0;
    cJSON *j;
    while (!ok && (j = next_json()) != NULL) {
        const char *method = str(j, "method");
        ok = method && strcmp(method, "turn/completed") == 0;
        cJSON_Delete(j);
    }
    return finish(ok);
}

static int drive_pi(const char *provider, const char *model, const char *dir, const char *prompt,
                    char *bin)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char session[PATH_MAX];
    snprintf(session, sizeof(session), "%s/bench-%lld%09ld-%d.jsonl", dir, (long long)ts.tv_sec,
             ts.tv_nsec, (int)getpid());
    char *argv[12] = {bin, "--mode", "rpc"};
    int n = 3;
    if (provider) {
        argv[n++] = "--provider";
        argv[n++] = (char *)provider;
    }
    if (model) {
        argv[n++] = "--model";
        argv[n++] = (char *)model;
    }
    argv[n++] = "--session";
    argv[n++] = session;
    argv[n] = NULL;
    spawn(argv);
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "id", "1");
    cJSON_AddStringToObject(m, "type", "get_state");
    send_json(m);
    m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "id", "3");
    cJSON_AddStringToObject(m, "type", "prompt");
    cJSON_AddStringToObject(m, "message", prompt);
    send_json(m);
    int ok = 0, refused = 0;
    cJSON *j;
    while (!ok && !refused && (j = next_json()) != NULL) {
        const char *type = str(j, "type");
        ok = type && strcmp(type, "agent_end") == 0;
        refused = type && strcmp(type, "response") == 0 &&
                  !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "success"));
        cJSON_Delete(j);
    }
    return finish(ok);
}

static void usage(void)
{
    fprintf(stderr, "usage: bench-drive codex [-m MODEL] PROMPT CODEX\n"
                    "       bench-drive pi [-p PROVIDER] [-m MODEL] -s SESSION_DIR PROMPT PI\n");
    exit(2);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        usage();
    const char *model = NULL, *provider = NULL, *dir = NULL;
    int i = 2;
    for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
        if (strcmp(argv[i], "-m") == 0)
            model = argv[i + 1];
        else if (strcmp(argv[i], "-p") == 0)
            provider = argv[i + 1];
        else if (strcmp(argv[i], "-s") == 0)
            dir = argv[i + 1];
        else
            usage();
    }
    if (argc - i != 2)
        usage();
    signal(SIGPIPE, SIG_IGN);
    if (strcmp(argv[1], "codex") == 0)
        return drive_codex(model, argv[i], argv[i + 1]);
    if (strcmp(argv[1], "pi") == 0 && dir)
        return drive_pi(provider, model, dir, argv[i], argv[i + 1]);
    usage();
    return 2;
}
