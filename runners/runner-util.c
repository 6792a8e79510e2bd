/* SPDX-License-Identifier: MIT */
/* runner-util: helpers shared by every coder's runner. */
#include "runner.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int bt_runner_id_ok(const char *id)
{
    size_t n = id ? strlen(id) : 0;
    if (n == 0 || n > 256 || id[0] == '-')
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)id[i];
        if (!isalnum(c) && c != '.' && c != '_' && c != ':' && c != '-')
            return 0;
    }
    return 1;
}

void bt_runner_put_json(struct bt_buf *out, struct cJSON *msg)
{
    char *s = cJSON_PrintUnformatted(msg);
    bt_buf_adds(out, s);
    bt_buf_addc(out, '\n');
    cJSON_free(s);
    cJSON_Delete(msg);
}

void bt_runner_add_text_input(cJSON *params, const char *key, const char *text)
{
    cJSON *input = cJSON_AddArrayToObject(params, key);
    cJSON *block = cJSON_CreateObject();
    cJSON_AddStringToObject(block, "type", "text");
    cJSON_AddStringToObject(block, "text", text ? text : "");
    cJSON_AddItemToArray(input, block);
}

void bt_runner_add_client_info(cJSON *params)
{
    cJSON *info = cJSON_AddObjectToObject(params, "clientInfo");
    cJSON_AddStringToObject(info, "name", "baton");
    cJSON_AddStringToObject(info, "title", "baton");
    cJSON_AddStringToObject(info, "version", BATON_VERSION);
}

/* The answer's envelope: jsonrpc, and the request's id (null if it is not
 * JSON, which a parser never passes). */
static cJSON *answer_to(const struct bt_signal_request *rq, const char *jsonrpc)
{
    cJSON *m = cJSON_CreateObject();
    if (jsonrpc)
        cJSON_AddStringToObject(m, "jsonrpc", jsonrpc);
    cJSON *id = cJSON_Parse(rq->request_id);
    cJSON_AddItemToObject(m, "id", id ? id : cJSON_CreateNull());
    return m;
}

void bt_runner_answer(const struct bt_signal_request *rq, const char *jsonrpc, struct cJSON *result,
                      struct bt_buf *out)
{
    cJSON *m = answer_to(rq, jsonrpc);
    cJSON_AddItemToObject(m, "result", result);
    bt_runner_put_json(out, m);
}

void bt_runner_answer_error(const struct bt_signal_request *rq, const char *jsonrpc, int code,
                            const char *message, struct bt_buf *out)
{
    cJSON *m = answer_to(rq, jsonrpc);
    cJSON *e = cJSON_AddObjectToObject(m, "error");
    cJSON_AddNumberToObject(e, "code", code);
    cJSON_AddStringToObject(e, "message", message);
    bt_runner_put_json(out, m);
}

void bt_runner_ids_sent(struct bt_runner_ids *ids, int id)
{
    ids->sent |= 1u << id;
}

int bt_runner_ids_first_response(struct bt_runner_ids *ids, int64_t id, int lo, int hi)
{
    if (id < lo || id > hi)
        return 0;
    unsigned bit = 1u << id;
    if (!(ids->sent & bit) || (ids->answered & bit))
        return 0;
    ids->answered |= bit;
    return 1;
}

void bt_runner_fail(const struct bt_parser_sink *sink, enum bt_error_kind kind, const char *message)
{
    struct bt_signal sig = {
        .type = BT_SIGNAL_TURN_END,
        .turn_end = {.status = BT_TURN_FAILED, .error_kind = kind, .message = message}};
    sink->signal(sink->data, &sig);
}

/* 1 if path has a "." or ".." component (or an empty one): a coder writes
 * none, so such a path was not written by it. */
static int odd_components(const char *path)
{
    for (const char *c = path + 1; *c;) {
        size_t n = strcspn(c, "/");
        if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
            return 1;
        c += n;
        c += *c == '/';
    }
    return 0;
}

/* 1 if dir (resolved) is root (resolved) or inside it. */
static int is_inside(const char *dir, const char *root)
{
    size_t n = strlen(root);
    if (n == 1) /* "/" */
        return 1;
    return strncmp(dir, root, n) == 0 && (dir[n] == '\0' || dir[n] == '/');
}

int bt_runner_session_file(const char *root, const char *path, int remove, char **resolved,
                           char **why)
{
    *resolved = NULL;
    *why = NULL;
    const char *slash = path ? strrchr(path, '/') : NULL;
    if (!slash || path[0] != '/' || !slash[1]) {
        *why = bt_xstrdup("it is not an absolute path of a file");
        return -EPERM;
    }
    if (odd_components(path)) {
        *why = bt_xstrdup("its path has a '.' or '..' component");
        return -EPERM;
    }
    char *dir = slash == path ? bt_xstrdup("/") : bt_xstrndup(path, (size_t)(slash - path));
    char *real_dir = realpath(dir, NULL);
    int err = real_dir ? 0 : errno;
    free(dir);
    if (!real_dir)
        return err == ENOENT || err == ENOTDIR ? -ENOENT : -err;
    char *real_root = realpath(root, NULL);
    int rc = 0;
    if (!real_root || !is_inside(real_dir, real_root)) {
        *why = bt_xasprintf("it is not inside %s", root);
        rc = -EPERM;
    }
    int fd = rc ? -1 : open(real_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st = {0};
    if (rc == 0 && (fd < 0 || fstatat(fd, slash + 1, &st, AT_SYMLINK_NOFOLLOW) != 0))
        rc = errno == ENOENT || errno == ENOTDIR ? -ENOENT : errno ? -errno : -EIO;
    if (rc == 0 && !S_ISREG(st.st_mode)) {
        *why = bt_xstrdup(S_ISLNK(st.st_mode) ? "it is a symbolic link, not a session file"
                                              : "it is not a regular file");
        rc = -EPERM;
    }
    if (rc == 0 && remove && unlinkat(fd, slash + 1, 0) != 0)
        rc = errno == ENOENT ? -ENOENT : -errno;
    if (rc == 0)
        *resolved = bt_xasprintf("%s/%s", strcmp(real_dir, "/") ? real_dir : "", slash + 1);
    if (fd >= 0)
        close(fd);
    free(real_root);
    free(real_dir);
    return rc;
}
