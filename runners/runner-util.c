/* SPDX-License-Identifier: MIT */
/* runner-util: helpers shared by every coder's runner. */
#include "runner.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <dirent.h>
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

int bt_runner_uuid_ok(const char *s)
{
    static const char shape[] = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";
    if (!s || strlen(s) != sizeof(shape) - 1)
        return 0;
    for (size_t i = 0; shape[i]; i++)
        if (shape[i] == '-' ? s[i] != '-' : !strchr("0123456789abcdefABCDEF", s[i]))
            return 0;
    return 1;
}

int bt_runner_home_dir(const char *var, const char *var_tail, const char *home_tail, char **dir,
                       char **why)
{
    const char *v = getenv(var), *home = getenv("HOME");
    int own = v && *v;
    const char *name = own ? var : "HOME", *value = own ? v : home;
    *dir = NULL;
    *why = NULL;
    if (!value || !*value) {
        *why = bt_xasprintf("neither %s nor HOME is set", var);
        return -ENOENT;
    }
    if (value[0] != '/') {
        *why = bt_xasprintf("%s is not an absolute path", name);
        return -EINVAL;
    }
    *dir = bt_xasprintf("%s%s", value, own ? var_tail : home_tail);
    return 0;
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

/* -errno of the last call, for a failure that must have set it. */
static int neg_errno(void)
{
    return errno ? -errno : -EIO;
}

/* Walk the session directory open as fd (taken) on device dev, depth
 * levels below the one rm was given: with remove, unlink every entry
 * depth-first (a link, a file of any kind, a hard link: only the name
 * inside goes; a subdirectory once it is empty); without, only look.
 * Links are never followed and nothing on another file system (a mount
 * point) is entered. Returns 0; -EPERM, *why (owned) saying what, for a
 * mount point or a tree deeper than BT_RUNNER_TREE_DEPTH; or the negated
 * errno of what failed. */
static int tree_walk(int fd, dev_t dev, int depth, int remove, char **why)
{
    DIR *d = fdopendir(fd);
    if (!d) {
        int rc = neg_errno();
        close(fd);
        return rc;
    }
    int rc = 0;
    for (struct dirent *e; rc == 0 && (errno = 0, e = readdir(d)) != NULL;) {
        const char *name = e->d_name;
        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
            continue;
        struct stat st;
        if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            rc = errno == ENOENT ? 0 : neg_errno(); /* gone meanwhile: fine */
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            if (st.st_dev != dev) {
                *why = bt_xasprintf("it holds a mount point (%s)", name);
                rc = -EPERM;
            } else if (depth >= BT_RUNNER_TREE_DEPTH) {
                *why = bt_xasprintf("it is nested more than %d directories deep",
                                    BT_RUNNER_TREE_DEPTH);
                rc = -EPERM;
            } else {
                int sub = openat(dirfd(d), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                rc = sub < 0 ? neg_errno() : tree_walk(sub, dev, depth + 1, remove, why);
                if (rc == 0 && remove && unlinkat(dirfd(d), name, AT_REMOVEDIR) != 0)
                    rc = neg_errno();
            }
        } else if (remove && unlinkat(dirfd(d), name, 0) != 0 && errno != ENOENT) {
            rc = neg_errno();
        }
    }
    if (rc == 0 && errno != 0)
        rc = neg_errno(); /* readdir failed */
    closedir(d);
    return rc;
}

/* The session directory name in the directory open as parent (st its
 * lstat): checked (tree_walk), then with remove emptied and removed. */
static int session_dir(int parent, const char *name, const struct stat *st, int remove, char **why)
{
    int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat now;
    if (fd < 0)
        return errno == ENOENT ? -ENOENT : neg_errno();
    if (fstat(fd, &now) != 0 || now.st_dev != st->st_dev || now.st_ino != st->st_ino) {
        close(fd);
        return -ENOENT; /* replaced since it was looked at */
    }
    /* a second descriptor for the removing walk (each walk's closedir
     * closes its own); it shares the offset, so it starts over */
    int again = remove ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
    if (remove && again < 0) {
        int rc = neg_errno();
        close(fd);
        return rc;
    }
    int rc = tree_walk(fd, st->st_dev, 0, 0, why);
    if (rc == 0 && remove) {
        if (lseek(again, 0, SEEK_SET) != 0) {
            rc = neg_errno();
            close(again);
        } else {
            rc = tree_walk(again, st->st_dev, 0, 1, why);
        }
        if (rc == 0 && unlinkat(parent, name, AT_REMOVEDIR) != 0)
            rc = errno == ENOENT ? -ENOENT : neg_errno();
    } else if (again >= 0) {
        close(again);
    }
    return rc;
}

int bt_runner_session_file(const char *root, const char *path, int remove, char **resolved,
                           char **why)
{
    *resolved = NULL;
    *why = NULL;
    size_t len = path ? strlen(path) : 0;
    int is_dir = len > 1 && path[len - 1] == '/';
    char *p = path ? bt_xstrndup(path, len - (size_t)is_dir) : NULL;
    const char *slash = p ? strrchr(p, '/') : NULL;
    if (!slash || p[0] != '/' || !slash[1]) {
        *why = bt_xstrdup("it is not an absolute path of a file");
        free(p);
        return -EPERM;
    }
    if (odd_components(p)) {
        *why = bt_xstrdup("its path has a '.' or '..' component");
        free(p);
        return -EPERM;
    }
    char *dir = slash == p ? bt_xstrdup("/") : bt_xstrndup(p, (size_t)(slash - p));
    char *real_dir = realpath(dir, NULL);
    int err = real_dir ? 0 : errno;
    free(dir);
    if (!real_dir) {
        free(p);
        return err == ENOENT || err == ENOTDIR ? -ENOENT : -err;
    }
    char *real_root = realpath(root, NULL);
    int rc = 0;
    if (!real_root || !is_inside(real_dir, real_root)) {
        *why = bt_xasprintf("it is not inside %s", root);
        rc = -EPERM;
    }
    const char *name = slash + 1;
    int fd = rc ? -1 : open(real_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st = {0};
    if (rc == 0 && (fd < 0 || fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0))
        rc = errno == ENOENT || errno == ENOTDIR ? -ENOENT : neg_errno();
    if (rc == 0 && S_ISLNK(st.st_mode)) {
        *why =
            bt_xasprintf("it is a symbolic link, not a session %s", is_dir ? "directory" : "file");
        rc = -EPERM;
    } else if (rc == 0 && !(is_dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode))) {
        *why = bt_xstrdup(is_dir ? "it is not a directory" : "it is not a regular file");
        rc = -EPERM;
    }
    if (rc == 0 && is_dir)
        rc = session_dir(fd, name, &st, remove, why);
    else if (rc == 0 && remove && unlinkat(fd, name, 0) != 0)
        rc = errno == ENOENT ? -ENOENT : neg_errno();
    if (rc == 0)
        *resolved =
            bt_xasprintf("%s/%s%s", strcmp(real_dir, "/") ? real_dir : "", name, is_dir ? "/" : "");
    if (fd >= 0)
        close(fd);
    free(real_root);
    free(real_dir);
    free(p);
    return rc;
}

int bt_runner_is_question(const struct bt_signal_request *rq)
{
    return rq->approval_kind && strcmp(rq->approval_kind, "user_input") == 0;
}

int bt_runner_accepts(const struct bt_runner_config *cfg, const struct bt_signal_request *rq,
                      const char **by)
{
    /* after the stop nobody is asked: the user has already said no more */
    if (rq->stopping) {
        *by = "cancel";
        return 0;
    }
    /* a question wants words, which neither a policy nor an allow/reject
     * choice gives */
    if (bt_runner_is_question(rq)) {
        *by = "policy";
        return 0;
    }
    *by = "policy";
    return cfg->approval == BT_APPROVAL_AUTO;
}

void bt_runner_policy(const struct bt_runner_config *cfg, const struct bt_signal_request *rq,
                      struct bt_runner_decision *d)
{
    *d = (struct bt_runner_decision){0};
    d->accept = bt_runner_accepts(cfg, rq, &d->by);
}

char *bt_runner_answer_text(const struct bt_runner_decision *d, size_t i)
{
    if (!d->accept || !d->answers_json)
        return NULL;
    cJSON *all = cJSON_Parse(d->answers_json);
    const cJSON *one = cJSON_IsArray(all) ? cJSON_GetArrayItem(all, (int)i) : NULL;
    struct bt_buf b = BT_BUF_INIT;
    const cJSON *s, *list = cJSON_IsArray(one) ? one : NULL;
    int n = 0;
    cJSON_ArrayForEach(s, list)
    {
        if (!cJSON_IsString(s))
            continue;
        bt_buf_addf(&b, "%s%s", n++ ? ", " : "", s->valuestring);
    }
    cJSON_Delete(all);
    if (!n) {
        bt_buf_release(&b);
        return NULL;
    }
    return bt_buf_detach(&b, NULL);
}

void bt_runner_resolved(const struct bt_parser_sink *sink, const struct bt_signal_request *rq,
                        int accept, const struct bt_runner_decision *d)
{
    struct bt_event ev;
    bt_event_init(&ev, BT_EVENT_APPROVAL_RESOLVED);
    ev.approval_kind = rq->approval_kind;
    ev.summary = rq->summary;
    ev.item.id = rq->item_id;
    ev.request_id = rq->request_id;
    ev.decision = accept ? "accept" : "decline";
    ev.by = d->by ? d->by : "policy";
    if (accept && bt_runner_is_question(rq))
        ev.answers_json = d->answers_json;
    sink->event(sink->data, &ev);
}
