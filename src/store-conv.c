/* SPDX-License-Identifier: MIT */
/*
 * store-conv: conversations and their messages (store.h, "conversations"
 * and "messages"; docs/store.md). A handed-off conversation's status is
 * decided in store-handoff.c, a queued message's number in store-queue.c.
 */
#include "store-int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "slot.h"
#include "util.h"

/* --- SQL ---------------------------------------------------------------- */

#define MSG_SELECT                                                                                 \
    "SELECT id, conversation, seq, role, state, text, error_kind, error_text,"                     \
    " run, created_ms, updated_ms, queue_no FROM messages"

static const char SQL_CONV_INSERT[] =
    "INSERT INTO conversations (id, title, coder, model, cwd,"
    " created_ms, updated_ms, wt_path, wt_branch, wt_base, wt_start, wt_repo, group_id)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6, ?7, ?8, ?9, ?10, ?11, ?12)";
static const char SQL_CONV_TOUCH[] = "UPDATE conversations SET updated_ms = ?2 WHERE id = ?1";
static const char SQL_CONV_GET[] = BT_ST_CONV_SELECT " WHERE c.id = ?1";
static const char SQL_CONV_LIST[] =
    BT_ST_CONV_SELECT " ORDER BY c.updated_ms DESC, c.id DESC LIMIT ?1";
static const char SQL_CONV_RESOLVE[] = "SELECT id FROM conversations WHERE id >= ?1"
                                       " AND id < ?1 || '{' ORDER BY id LIMIT 2";
static const char SQL_CONV_EXISTS[] = "SELECT 1 FROM conversations WHERE id = ?1";
static const char SQL_CONV_SET_NATIVE[] = "UPDATE conversations SET native_session_id ="
                                          " coalesce(?2, native_session_id), native_session_path ="
                                          " coalesce(?3, native_session_path) WHERE id = ?1";
static const char SQL_CONV_SET_STATUS[] = "UPDATE conversations SET status = ?2 WHERE id = ?1";
static const char SQL_MSG_INSERT[] = "INSERT INTO messages (conversation, seq, role, state, text,"
                                     " run, created_ms, updated_ms) VALUES (?1, (SELECT"
                                     " coalesce(max(seq), 0) + 1 FROM messages WHERE"
                                     " conversation = ?1), ?2, ?3, ?4, ?5, ?6, ?6)";
static const char SQL_MSG_UPDATE[] = "UPDATE messages SET state = coalesce(?2, state), text ="
                                     " coalesce(?3, text) || coalesce(?4, ''), error_kind ="
                                     " coalesce(?5, error_kind), error_text = coalesce(?6,"
                                     " error_text), run = coalesce(?7, run), updated_ms = ?8"
                                     " WHERE id = ?1";
/* The transcript in turn order, not in the order the rows were stored: a
 * retry's answer (another run of an earlier turn) is stored after prompts
 * queued meanwhile, yet belongs under the prompt it answers. So: every
 * message by its run's turn (a message without a run, as an old store may
 * have, by the turn of the linked message before it, after that turn's
 * own), the queued prompts last (no turn has taken them yet), and in seq
 * order within a turn (its prompts before its answers, a cancelled answer
 * before its retry's). */
static const char SQL_MSG_LIST[] =
    "SELECT m.id, m.conversation, m.seq, m.role, m.state, m.text, m.error_kind,"
    " m.error_text, m.run, m.created_ms, m.updated_ms, m.queue_no"
    " FROM messages m LEFT JOIN runs r ON r.id = m.run WHERE m.conversation = ?1"
    " ORDER BY m.state = 'queued', coalesce(r.turn, (SELECT r2.turn FROM messages m2"
    " JOIN runs r2 ON r2.id = m2.run WHERE m2.conversation = m.conversation AND m2.seq <"
    " m.seq ORDER BY m2.seq DESC LIMIT 1), 0), r.turn IS NULL, m.seq";

/* --- titles ------------------------------------------------------------- */

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

char *bt_store_make_title(const char *text)
{
    if (!text)
        return bt_xstrdup("");
    while (is_blank(*text))
        text++;
    size_t n = strcspn(text, "\n");
    char *clean = bt_utf8_sanitize(text, n, NULL);
    n = bt_utf8_cut(clean, strlen(clean), BT_STORE_TITLE_MAX);
    while (n > 0 && is_blank(clean[n - 1]))
        n--;
    clean[n] = '\0';
    return clean;
}

/* --- conversations ------------------------------------------------------ */

void bt_store_conversation_release(struct bt_store_conversation *c)
{
    if (!c)
        return;
    free(c->title);
    free(c->coder);
    free(c->model);
    free(c->cwd);
    free(c->native_session_id);
    free(c->native_session_path);
    free(c->worktree.path);
    free(c->worktree.branch);
    free(c->worktree.base);
    free(c->worktree.start);
    free(c->worktree.repo);
    memset(c, 0, sizeof *c);
}

void bt_st_read_conversation(struct bt_store *s, sqlite3_stmt *q, struct bt_store_conversation *c)
{
    bt_st_col_id(q, 0, c->id);
    c->title = bt_st_col_str0(q, 1);
    c->coder = bt_st_col_str0(q, 2);
    c->model = bt_st_col_str(q, 3);
    c->cwd = bt_st_col_str0(q, 4);
    c->native_session_id = bt_st_col_str(q, 5);
    c->native_session_path = bt_st_col_str(q, 6);
    c->status = (enum bt_store_conv_status)BT_ST_COL_ENUM(q, 7, bt_st_conv_status_names);
    c->created_ms = sqlite3_column_int64(q, 8);
    c->updated_ms = sqlite3_column_int64(q, 9);
    bt_st_col_id(q, 10, c->last_run);
    c->last_run_state = (enum bt_store_run_state)BT_ST_COL_ENUM(q, 11, bt_st_run_state_names);
    c->worktree.path = bt_st_col_str(q, 12);
    c->worktree.branch = bt_st_col_str(q, 13);
    c->worktree.base = bt_st_col_str(q, 14);
    c->worktree.start = bt_st_col_str(q, 15);
    c->worktree.repo = bt_st_col_str(q, 16);
    bt_st_col_id(q, 17, c->group);
    c->waiting = c->last_run_state == BT_STORE_RUN_RUNNING && bt_slot_waiting(s->home, c->last_run);
}

int bt_store_conversation_create(struct bt_store *s, const struct bt_store_conversation_new *o,
                                 char id[BT_ID_SIZE])
{
    id[0] = '\0';
    if (!o || !o->coder || !o->cwd)
        return bt_st_fail(s, -EINVAL, "a conversation needs a coder and a directory");
    const struct bt_store_worktree *w = o->worktree;
    if (w && (!w->path || !w->branch || !w->base || !w->start || !w->repo))
        return bt_st_fail(s, -EINVAL, "a worktree needs its path, branch, base, start and repo");
    if (o->id && !bt_id_valid(o->id))
        return bt_st_fail(s, -EINVAL, "'%s' is not a conversation id", o->id);
    char new_id[BT_ID_SIZE];
    int rc = o->id ? (memcpy(new_id, o->id, BT_ID_SIZE), 0) : bt_id_new(new_id);
    if (rc)
        return bt_st_fail(s, rc, "cannot make an id: %s", strerror(-rc));
    sqlite3_stmt *q = bt_st_write_sql(s, SQL_CONV_INSERT);
    if (!q)
        return BT_ESTORE;
    char *title = bt_store_make_title(o->title);
    bt_st_bind_text(q, 1, new_id);
    bt_st_bind_text(q, 2, title);
    bt_st_bind_text(q, 3, o->coder);
    bt_st_bind_text(q, 4, o->model);
    bt_st_bind_text(q, 5, o->cwd);
    sqlite3_bind_int64(q, 6, bt_now_ms());
    if (w) {
        const char *v[] = {w->path, w->branch, w->base, w->start, w->repo};
        for (int i = 0; i < 5; i++)
            bt_st_bind_text(q, 7 + i, v[i]);
    }
    bt_st_bind_text(q, 12, o->group);
    rc = bt_st_run(s, q, "create conversation");
    free(title);
    if (rc == 0)
        memcpy(id, new_id, BT_ID_SIZE);
    return rc;
}

int bt_store_conversation_get(struct bt_store *s, const char *id, struct bt_store_conversation *out)
{
    memset(out, 0, sizeof *out);
    sqlite3_stmt *q = id ? bt_st_sql(s, SQL_CONV_GET) : NULL;
    if (!q)
        return id ? BT_ESTORE : bt_st_fail(s, -EINVAL, "no conversation id");
    bt_st_bind_text(q, 1, id);
    int rc = bt_st_step(s, q, "get conversation");
    if (rc != 1)
        return rc ? rc : bt_st_fail(s, BT_ENOTFOUND, "no conversation '%s'", id);
    bt_st_read_conversation(s, q, out);
    return bt_st_done(q, 0);
}

int bt_st_id_prefix(const char *text, char buf[BT_ID_SIZE])
{
    size_t n = text ? strlen(text) : 0;
    if (n == 0 || n > BT_ID_LEN)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)text[i];
        buf[i] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
        if (!((buf[i] >= '0' && buf[i] <= '9') || (buf[i] >= 'a' && buf[i] <= 'z')))
            return 0;
    }
    buf[n] = '\0';
    return 1;
}

int bt_store_conversation_resolve(struct bt_store *s, const char *text, char id[BT_ID_SIZE])
{
    char prefix[BT_ID_SIZE];
    id[0] = '\0';
    if (!bt_st_id_prefix(text, prefix))
        return bt_st_fail(s, BT_ENOTFOUND, "not a conversation id");
    sqlite3_stmt *q = bt_st_sql(s, SQL_CONV_RESOLVE);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, prefix);
    int rc = bt_st_step(s, q, "resolve conversation");
    if (rc != 1)
        return rc ? rc : bt_st_fail(s, BT_ENOTFOUND, "no conversation matches '%s'", prefix);
    bt_st_col_id(q, 0, id);
    rc = bt_st_step(s, q, "resolve conversation");
    if (rc == 1) {
        id[0] = '\0';
        return bt_st_done(
            q, bt_st_fail(s, BT_EAMBIGUOUS, "'%s' matches several conversations", prefix));
    }
    if (rc)
        id[0] = '\0';
    return rc;
}

int bt_store_conversation_set_native(struct bt_store *s, const char *id, const char *session_id,
                                     const char *session_path)
{
    if (!id)
        return bt_st_fail(s, -EINVAL, "no conversation id");
    sqlite3_stmt *q = bt_st_write_sql(s, SQL_CONV_SET_NATIVE);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, id);
    bt_st_bind_text(q, 2, session_id);
    bt_st_bind_text(q, 3, session_path);
    int rc = bt_st_run(s, q, "set native session");
    return rc ? rc : bt_st_changed_one(s, "conversation", id);
}

int bt_store_conversation_set_status(struct bt_store *s, const char *id,
                                     enum bt_store_conv_status status)
{
    if (!id || !BT_ST_VALID(bt_st_conv_status_names, status))
        return bt_st_fail(s, -EINVAL, "no conversation id or an invalid status");
    sqlite3_stmt *q = bt_st_write_sql(s, SQL_CONV_SET_STATUS);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, id);
    bt_st_bind_text(q, 2, bt_st_conv_status_names[status]);
    int rc = bt_st_run(s, q, "set conversation status");
    return rc ? rc : bt_st_changed_one(s, "conversation", id);
}

void bt_store_conversation_list_free(struct bt_store_conversation *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        bt_store_conversation_release(&v[i]);
    free(v);
}

int bt_store_conversation_list(struct bt_store *s, size_t limit, struct bt_store_conversation **out,
                               size_t *n)
{
    size_t cap = 0;
    *out = NULL;
    *n = 0;
    sqlite3_stmt *q = bt_st_sql(s, SQL_CONV_LIST);
    if (!q)
        return BT_ESTORE;
    sqlite3_bind_int64(q, 1, limit == 0 || limit > INT64_MAX ? -1 : (int64_t)limit);
    int rc;
    while ((rc = bt_st_step(s, q, "list conversations")) == 1) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            *out = bt_xrealloc(*out, cap * sizeof **out);
        }
        bt_st_read_conversation(s, q, &(*out)[(*n)++]);
    }
    if (rc) {
        bt_store_conversation_list_free(*out, *n);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

/* --- messages ----------------------------------------------------------- */

void bt_store_message_release(struct bt_store_message *m)
{
    if (!m)
        return;
    free(m->text);
    free(m->error_kind);
    free(m->error_text);
    memset(m, 0, sizeof *m);
}

void bt_store_message_list_free(struct bt_store_message *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        bt_store_message_release(&v[i]);
    free(v);
}

/* Set the conversation's updated_ms; BT_ENOTFOUND if there is none. */
int bt_st_touch_conversation(struct bt_store *s, const char *conv, int64_t now)
{
    sqlite3_stmt *q = bt_st_sql(s, SQL_CONV_TOUCH);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, conv);
    sqlite3_bind_int64(q, 2, now);
    int rc = bt_st_run(s, q, "update conversation");
    return rc ? rc : bt_st_changed_one(s, "conversation", conv);
}

/* Insert a message at the end of its conversation (inside a transaction);
 * a queued one gets its queue number (*queue_no, may be NULL). */
int bt_st_insert_message(struct bt_store *s, const struct bt_store_message_new *o, int64_t now,
                         int64_t *id, int64_t *queue_no)
{
    sqlite3_stmt *q = bt_st_sql(s, SQL_MSG_INSERT);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, o->conversation);
    bt_st_bind_text(q, 2, bt_st_role_names[o->role]);
    bt_st_bind_text(q, 3, bt_st_msg_state_names[o->state]);
    bt_st_bind_text(q, 4, o->text ? o->text : "");
    bt_st_bind_text(q, 5, o->run);
    sqlite3_bind_int64(q, 6, now);
    int rc = bt_st_run(s, q, "add message");
    int64_t msg = sqlite3_last_insert_rowid(s->db);
    if (rc == 0 && id)
        *id = msg;
    if (rc == 0 && o->state == BT_STORE_MSG_QUEUED)
        rc = bt_st_queue_number(s, o->conversation, msg, queue_no);
    return rc;
}

int bt_store_message_add(struct bt_store *s, const struct bt_store_message_new *o, int64_t *id)
{
    if (id)
        *id = 0;
    if (!o || !o->conversation || !BT_ST_VALID(bt_st_role_names, o->role) ||
        !BT_ST_VALID(bt_st_msg_state_names, o->state))
        return bt_st_fail(s, -EINVAL, "a message needs a conversation, a role and a state");
    int64_t now = bt_now_ms();
    int rc = bt_st_tx_begin(s);
    if (rc)
        return rc;
    rc = bt_st_touch_conversation(s, o->conversation, now);
    if (rc == 0)
        rc = bt_st_insert_message(s, o, now, id, NULL);
    rc = bt_st_tx_end(s, rc);
    if (rc && id)
        *id = 0;
    return rc;
}

int bt_store_message_update(struct bt_store *s, int64_t id, const struct bt_store_message_update *u)
{
    if (!u || (u->state && !BT_ST_VALID(bt_st_msg_state_names, u->state)))
        return bt_st_fail(s, -EINVAL, "invalid message update");
    sqlite3_stmt *q = bt_st_write_sql(s, SQL_MSG_UPDATE);
    if (!q)
        return BT_ESTORE;
    sqlite3_bind_int64(q, 1, id);
    bt_st_bind_text(q, 2, u->state ? bt_st_msg_state_names[u->state] : NULL);
    bt_st_bind_text(q, 3, u->text);
    bt_st_bind_text(q, 4, u->append);
    bt_st_bind_text(q, 5, u->error_kind);
    bt_st_bind_text(q, 6, u->error_text);
    bt_st_bind_text(q, 7, u->run);
    sqlite3_bind_int64(q, 8, bt_now_ms());
    int rc = bt_st_run(s, q, "update message");
    if (rc == 0 && sqlite3_changes(s->db) == 0)
        rc = bt_st_fail(s, BT_ENOTFOUND, "no message %lld", (long long)id);
    return rc;
}

static void read_message(sqlite3_stmt *q, struct bt_store_message *m)
{
    m->id = sqlite3_column_int64(q, 0);
    bt_st_col_id(q, 1, m->conversation);
    m->seq = sqlite3_column_int64(q, 2);
    m->role = (enum bt_store_role)BT_ST_COL_ENUM(q, 3, bt_st_role_names);
    m->state = (enum bt_store_msg_state)BT_ST_COL_ENUM(q, 4, bt_st_msg_state_names);
    m->text = bt_st_col_str0(q, 5);
    m->error_kind = bt_st_col_str(q, 6);
    m->error_text = bt_st_col_str(q, 7);
    bt_st_col_id(q, 8, m->run);
    m->created_ms = sqlite3_column_int64(q, 9);
    m->updated_ms = sqlite3_column_int64(q, 10);
    m->queue_no = bt_st_col_i64(q, 11, 0);
}

/* 0 if the conversation exists, BT_ENOTFOUND or BT_ESTORE. */
static int conversation_exists(struct bt_store *s, const char *id)
{
    sqlite3_stmt *q = bt_st_sql(s, SQL_CONV_EXISTS);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, id);
    int rc = bt_st_step(s, q, "find conversation");
    if (rc == 1)
        return bt_st_done(q, 0);
    return rc ? rc : bt_st_fail(s, BT_ENOTFOUND, "no conversation '%s'", id);
}

int bt_store_message_list(struct bt_store *s, const char *conversation,
                          struct bt_store_message **out, size_t *n)
{
    size_t cap = 0;
    *out = NULL;
    *n = 0;
    if (!conversation)
        return bt_st_fail(s, -EINVAL, "no conversation id");
    int rc = conversation_exists(s, conversation);
    sqlite3_stmt *q = rc == 0 ? bt_st_sql(s, SQL_MSG_LIST) : NULL;
    if (!q)
        return rc ? rc : BT_ESTORE;
    bt_st_bind_text(q, 1, conversation);
    while ((rc = bt_st_step(s, q, "list messages")) == 1) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            *out = bt_xrealloc(*out, cap * sizeof **out);
        }
        read_message(q, &(*out)[(*n)++]);
    }
    if (rc) {
        bt_store_message_list_free(*out, *n);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

/* --- queue numbers (store-queue.c takes them back) --- */

static const char SQL_BUMP[] = "UPDATE conversations SET queue_last = queue_last + 1"
                               " WHERE id = ?1";
static const char SQL_MARK[] = "UPDATE messages SET queue_no = (SELECT queue_last FROM"
                               " conversations WHERE id = messages.conversation) WHERE id = ?1";
static const char SQL_NUMBER[] = "SELECT queue_no FROM messages WHERE id = ?1";

int bt_st_queue_number(struct bt_store *s, const char *conv, int64_t msg, int64_t *queue_no)
{
    int64_t no = 0;
    int rc = bt_st_run_keyed(s, SQL_BUMP, conv, 0, "number the queued message");
    if (rc == 0)
        rc = bt_st_run_keyed(s, SQL_MARK, NULL, msg, "number the queued message");
    sqlite3_stmt *q = rc ? NULL : bt_st_sql(s, SQL_NUMBER);
    if (q) {
        sqlite3_bind_int64(q, 1, msg);
        rc = bt_st_query_int(s, q, "number the queued message", &no);
    } else if (rc == 0) {
        rc = BT_ESTORE;
    }
    if (queue_no)
        *queue_no = rc ? 0 : no;
    return rc;
}
