/* SPDX-License-Identifier: MIT */
/* acp-rpc: the messages `baton acp` writes (acp-int.h). */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acp-int.h"
#include "util.h"

/* After a stop signal, how long a write may wait for a client that reads
 * nothing: the agent is ending, and the lock it holds stops the rest. */
#define BT_ACP_STOP_WRITE_MS 1000

/* Pipes take this much without blocking once poll says POLLOUT. */
#define BT_ACP_WRITE_CHUNK 4096

/* All of buf, through short writes and EINTR; -errno once it cannot be
 * written (the reader is gone, or reads nothing after a stop signal). A
 * write waits only while poll says it would block, beside the stop pipe,
 * so a signal is seen while the client reads nothing. */
static int write_all(struct bt_acp *a, const char *buf, size_t len)
{
    while (len) {
        int stopping = atomic_load(&a->signo) != 0;
        struct pollfd p[2] = {{.fd = a->out_fd, .events = POLLOUT},
                              {.fd = a->stop_pipe[0], .events = POLLIN}};
        int n = poll(p, stopping ? 1 : 2, stopping ? BT_ACP_STOP_WRITE_MS : -1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            return -ETIMEDOUT;
        if (!p[0].revents)
            continue; /* the stop pipe: wait again, now with a limit */
        ssize_t w = write(a->out_fd, buf, len < BT_ACP_WRITE_CHUNK ? len : BT_ACP_WRITE_CHUNK);
        if (w < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (w <= 0)
            return w < 0 ? -errno : -EIO;
        buf += w;
        len -= (size_t)w;
    }
    return 0;
}

/* Write msg (freed). A failed write ends the agent (out_gone), unless the
 * message was a courtesy (optional): then it is dropped, and a message
 * that matters finds out whether the client is gone. */
static void send_msg(struct bt_acp *a, cJSON *msg, int locked, int optional)
{
    char *text = cJSON_PrintUnformatted(msg); /* control characters escaped: one line */
    cJSON_Delete(msg);
    if (!text)
        return;
    size_t len = strlen(text);
    text[len] = '\n'; /* the NUL becomes the line's end */
    if (!locked)
        pthread_mutex_lock(&a->lock);
    int rc = atomic_load(&a->out_gone) ? 0 : write_all(a, text, len + 1);
    if (rc && !optional) {
        a->out_errno = -rc;
        atomic_store(&a->out_gone, 1);
        bt_acp_wake(a); /* the main thread stops the agent */
    }
    if (!locked)
        pthread_mutex_unlock(&a->lock);
    free(text);
}

void bt_acp_send(struct bt_acp *a, cJSON *msg, int locked)
{
    send_msg(a, msg, locked, 0);
}

/* A copy of request id to answer with. cJSON keeps numbers as doubles and
 * prints 1e15 as 1e+15; an integer id (acp-agent.c takes none beyond
 * 2^53, where doubles hold every integer) goes back as its digits. */
static cJSON *id_copy(const cJSON *id)
{
    if (!id)
        return cJSON_CreateNull();
    if (!cJSON_IsNumber(id))
        return cJSON_Duplicate(id, 1);
    char digits[32];
    snprintf(digits, sizeof digits, "%" PRId64, (int64_t)id->valuedouble);
    return cJSON_CreateRaw(digits);
}

static cJSON *message(const cJSON *id)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "jsonrpc", "2.0");
    cJSON_AddItemToObject(m, "id", id_copy(id));
    return m;
}

void bt_acp_result(struct bt_acp *a, const cJSON *id, cJSON *result, int locked)
{
    cJSON *m = message(id);
    cJSON_AddItemToObject(m, "result", result ? result : cJSON_CreateObject());
    bt_acp_send(a, m, locked);
}

void bt_acp_error(struct bt_acp *a, const cJSON *id, int code, const char *message_text, int locked)
{
    cJSON *m = message(id);
    cJSON *e = cJSON_AddObjectToObject(m, "error");
    cJSON_AddNumberToObject(e, "code", code);
    cJSON_AddStringToObject(e, "message", message_text);
    bt_acp_send(a, m, locked);
}

static cJSON *update_msg(const char *sid, cJSON *update)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "jsonrpc", "2.0");
    cJSON_AddStringToObject(m, "method", "session/update");
    cJSON *p = cJSON_AddObjectToObject(m, "params");
    cJSON_AddStringToObject(p, "sessionId", sid);
    cJSON_AddItemToObject(p, "update", update);
    return m;
}

void bt_acp_update(struct bt_acp *a, const char *sid, cJSON *update, int locked)
{
    bt_acp_send(a, update_msg(sid, update), locked);
}

void bt_acp_update_optional(struct bt_acp *a, const char *sid, cJSON *update, int locked)
{
    send_msg(a, update_msg(sid, update), locked, 1);
}

void bt_acp_say(void *data, const char *line)
{
    (void)data;
    fprintf(stderr, "baton: %s\n", line);
}
