/* SPDX-License-Identifier: MIT */
/*
 * store-group: groups of conversations started together on one prompt
 * (store.h, "groups"; docs/store.md). A conversation names its group
 * (conversations.group_id); the trigger groups_emptied removes a group
 * with its last conversation.
 */
#include "store-int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "util.h"

static const char SQL_INSERT[] = "INSERT INTO groups (id, name, created_ms) VALUES (?1, ?2, ?3)";
static const char SQL_RESOLVE[] = "SELECT id FROM groups WHERE id >= ?1 AND id < ?1 || '{'"
                                  " ORDER BY id LIMIT 2";
#define GROUP_SELECT                                                                               \
    "SELECT g.id, g.name, g.created_ms, (SELECT count(*) FROM conversations c"                     \
    " WHERE c.group_id = g.id) FROM groups g"
/* a group whose every conversation failed to be made has none: not listed */
static const char SQL_LIST[] = GROUP_SELECT " WHERE EXISTS (SELECT 1 FROM conversations c"
                                            " WHERE c.group_id = g.id)"
                                            " ORDER BY g.created_ms DESC, g.id DESC LIMIT ?1";
static const char SQL_GET[] = GROUP_SELECT " WHERE g.id = ?1";
static const char SQL_DELETE_EMPTY[] = "DELETE FROM groups WHERE id = ?1 AND NOT EXISTS"
                                       " (SELECT 1 FROM conversations WHERE group_id = ?1)";
static const char SQL_MEMBERS[] = BT_ST_CONV_SELECT " WHERE c.group_id = ?1 ORDER BY c.rowid";

void bt_store_group_release(struct bt_store_group *g)
{
    if (g) {
        free(g->name);
        memset(g, 0, sizeof *g);
    }
}

void bt_store_group_list_free(struct bt_store_group *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        bt_store_group_release(&v[i]);
    free(v);
}

int bt_store_group_create(struct bt_store *s, const char *name, char id[BT_ID_SIZE])
{
    char new_id[BT_ID_SIZE];
    id[0] = '\0';
    int rc = bt_id_new(new_id);
    if (rc)
        return bt_st_fail(s, rc, "cannot make an id: %s", strerror(-rc));
    sqlite3_stmt *q = bt_st_write_sql(s, SQL_INSERT);
    if (!q)
        return BT_ESTORE;
    char *title = bt_store_make_title(name);
    bt_st_bind_text(q, 1, new_id);
    bt_st_bind_text(q, 2, title);
    sqlite3_bind_int64(q, 3, bt_now_ms());
    rc = bt_st_run(s, q, "create group");
    free(title);
    if (rc == 0)
        memcpy(id, new_id, BT_ID_SIZE);
    return rc;
}

int bt_store_group_resolve(struct bt_store *s, const char *text, char id[BT_ID_SIZE])
{
    char prefix[BT_ID_SIZE];
    id[0] = '\0';
    if (!bt_st_id_prefix(text, prefix))
        return bt_st_fail(s, BT_ENOTFOUND, "not a group id");
    sqlite3_stmt *q = bt_st_sql(s, SQL_RESOLVE);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, prefix);
    int rc = bt_st_step(s, q, "resolve group");
    if (rc != 1)
        return rc ? rc : bt_st_fail(s, BT_ENOTFOUND, "no group matches '%s'", prefix);
    bt_st_col_id(q, 0, id);
    rc = bt_st_step(s, q, "resolve group");
    if (rc == 1) {
        id[0] = '\0';
        return bt_st_done(q, bt_st_fail(s, BT_EAMBIGUOUS, "'%s' matches several groups", prefix));
    }
    if (rc)
        id[0] = '\0';
    return rc;
}

static void read_group(sqlite3_stmt *q, struct bt_store_group *g)
{
    bt_st_col_id(q, 0, g->id);
    g->name = bt_st_col_str0(q, 1);
    g->created_ms = sqlite3_column_int64(q, 2);
    g->members = sqlite3_column_int64(q, 3);
}

int bt_store_group_list(struct bt_store *s, size_t limit, struct bt_store_group **out, size_t *n)
{
    size_t cap = 0;
    *out = NULL;
    *n = 0;
    sqlite3_stmt *q = bt_st_sql(s, SQL_LIST);
    if (!q)
        return BT_ESTORE;
    sqlite3_bind_int64(q, 1, limit ? (sqlite3_int64)limit : -1);
    int rc;
    while ((rc = bt_st_step(s, q, "list groups")) == 1) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            *out = bt_xrealloc(*out, cap * sizeof **out);
        }
        memset(&(*out)[*n], 0, sizeof **out);
        read_group(q, &(*out)[(*n)++]);
    }
    if (rc) {
        bt_store_group_list_free(*out, *n);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

/* The conversations of group id, in the order they were made. */
static int members(struct bt_store *s, const char *id, struct bt_store_conversation **v, size_t *n)
{
    size_t cap = 0;
    sqlite3_stmt *q = bt_st_sql(s, SQL_MEMBERS);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, id);
    int rc;
    while ((rc = bt_st_step(s, q, "list a group's conversations")) == 1) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 8;
            *v = bt_xrealloc(*v, cap * sizeof **v);
        }
        memset(&(*v)[*n], 0, sizeof **v);
        bt_st_read_conversation(s, q, &(*v)[(*n)++]);
    }
    return rc;
}

int bt_store_group_get(struct bt_store *s, const char *id, struct bt_store_group *g,
                       struct bt_store_conversation **v, size_t *n)
{
    memset(g, 0, sizeof *g);
    *v = NULL;
    *n = 0;
    sqlite3_stmt *q = id ? bt_st_sql(s, SQL_GET) : NULL;
    if (!q)
        return id ? BT_ESTORE : bt_st_fail(s, -EINVAL, "no group id");
    bt_st_bind_text(q, 1, id);
    int rc = bt_st_step(s, q, "get group");
    if (rc != 1)
        return rc ? rc : bt_st_fail(s, BT_ENOTFOUND, "no group '%s'", id);
    read_group(q, g);
    rc = bt_st_done(q, 0);
    if (rc == 0)
        rc = members(s, id, v, n);
    if (rc) {
        bt_store_group_release(g);
        bt_store_conversation_list_free(*v, *n);
        *v = NULL;
        *n = 0;
    }
    return rc;
}

int bt_store_group_delete_empty(struct bt_store *s, const char *id)
{
    sqlite3_stmt *q = bt_st_write_sql(s, SQL_DELETE_EMPTY);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, id);
    return bt_st_run(s, q, "delete an empty group");
}
