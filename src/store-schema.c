/* SPDX-License-Identifier: MIT */
/*
 * store-schema: the schema's forward migrations (docs/store.md, "Schema
 * versions") and the step that brings an opened database to
 * BT_STORE_SCHEMA_VERSION, one transaction per step, so concurrent openers
 * migrate once and a failed step leaves the previous version.
 */
#include "store-int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "util.h"

/* --- schema ------------------------------------------------------------- */

/* Forward migrations: migrations[v] takes a database from user_version v to
 * v + 1 and runs in one transaction with the user_version update. Never edit
 * a step that has shipped; add a new one. */
/* The integer after "key=" in schema 3's options text (a key starts the
 * text or follows a space: idle_timeout_ms is not timeout_ms), or NULL. */
#define SETTING(key)                                                                               \
    "CASE WHEN instr(' ' || options, ' " key "=') > 0 THEN CAST(substr(options,"                   \
    " instr(' ' || options, ' " key "=') + length('" key "=')) AS INTEGER) END"

static const char *const migrations[] = {
    /* 0 -> 1: initial schema */
    "CREATE TABLE conversations ("
    " id TEXT PRIMARY KEY NOT NULL,"
    " title TEXT NOT NULL DEFAULT '',"
    " coder TEXT NOT NULL,"
    " model TEXT,"
    " cwd TEXT NOT NULL,"
    " native_session_id TEXT,"
    " native_session_path TEXT,"
    " status TEXT NOT NULL DEFAULT 'active'"
    "  CHECK (status IN ('active', 'transferred', 'archived')),"
    " created_ms INTEGER NOT NULL,"
    " updated_ms INTEGER NOT NULL);"
    "CREATE INDEX conversations_updated ON conversations(updated_ms, id);"
    "CREATE TABLE runs ("
    " id TEXT PRIMARY KEY NOT NULL,"
    " conversation TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,"
    " turn INTEGER NOT NULL CHECK (turn >= 1),"
    " coder TEXT NOT NULL,"
    " coder_version TEXT,"
    " model TEXT,"
    " state TEXT NOT NULL DEFAULT 'running' CHECK (state IN"
    "  ('running', 'completed', 'failed', 'cancelled', 'interrupted')),"
    " pid INTEGER,"
    " pgid INTEGER,"
    " child_start INTEGER,"
    " owner_pid INTEGER NOT NULL,"
    " owner_start INTEGER,"
    " exit_code INTEGER,"
    " exit_signal INTEGER,"
    " error_kind TEXT,"
    " error_text TEXT,"
    " stderr_tail BLOB,"
    " native_session_id TEXT,"
    " input_tokens INTEGER,"
    " cached_input_tokens INTEGER,"
    " output_tokens INTEGER,"
    " reasoning_tokens INTEGER,"
    " context_tokens INTEGER,"
    " context_window INTEGER,"
    " cost_usd REAL,"
    " started_ms INTEGER NOT NULL,"
    " ended_ms INTEGER);"
    "CREATE INDEX runs_conversation ON runs(conversation, started_ms);"
    "CREATE UNIQUE INDEX runs_one_running ON runs(conversation) WHERE state = 'running';"
    "CREATE TABLE messages ("
    " id INTEGER PRIMARY KEY,"
    " conversation TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,"
    " seq INTEGER NOT NULL CHECK (seq >= 1),"
    " role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),"
    " state TEXT NOT NULL CHECK (state IN ('streaming', 'complete', 'failed',"
    "  'cancelled', 'interrupted', 'queued')),"
    " text TEXT NOT NULL DEFAULT '',"
    " error_kind TEXT,"
    " error_text TEXT,"
    " run TEXT REFERENCES runs(id) ON DELETE SET NULL,"
    " created_ms INTEGER NOT NULL,"
    " updated_ms INTEGER NOT NULL,"
    " UNIQUE (conversation, seq));"
    "CREATE INDEX messages_run ON messages(run);"
    "CREATE TABLE events ("
    " run TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " seq INTEGER NOT NULL CHECK (seq >= 1),"
    " type TEXT NOT NULL,"
    " ts_ms INTEGER NOT NULL,"
    " data TEXT NOT NULL,"
    " PRIMARY KEY (run, seq));",
    /* 1 -> 2: the prompt a run sent, cancel requests, queued messages,
     * full-text search over titles and messages (external-content FTS5
     * tables kept by triggers) */
    "ALTER TABLE runs ADD COLUMN prompt TEXT;"
    "ALTER TABLE runs ADD COLUMN cancel_ms INTEGER;"
    "CREATE INDEX messages_queued ON messages(conversation, seq) WHERE state = 'queued';"
    "CREATE VIRTUAL TABLE messages_fts USING fts5(text, content = 'messages',"
    " content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 2');"
    "CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN"
    " INSERT INTO messages_fts (rowid, text) VALUES (new.id, new.text); END;"
    "CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN"
    " INSERT INTO messages_fts (messages_fts, rowid, text)"
    " VALUES ('delete', old.id, old.text); END;"
    "CREATE TRIGGER messages_fts_update AFTER UPDATE OF text ON messages BEGIN"
    " INSERT INTO messages_fts (messages_fts, rowid, text)"
    " VALUES ('delete', old.id, old.text);"
    " INSERT INTO messages_fts (rowid, text) VALUES (new.id, new.text); END;"
    "CREATE VIRTUAL TABLE titles_fts USING fts5(title, content = 'conversations',"
    " content_rowid = 'rowid', tokenize = 'unicode61 remove_diacritics 2');"
    "CREATE TRIGGER titles_fts_insert AFTER INSERT ON conversations BEGIN"
    " INSERT INTO titles_fts (rowid, title) VALUES (new.rowid, new.title); END;"
    "CREATE TRIGGER titles_fts_delete AFTER DELETE ON conversations BEGIN"
    " INSERT INTO titles_fts (titles_fts, rowid, title)"
    " VALUES ('delete', old.rowid, old.title); END;"
    "CREATE TRIGGER titles_fts_update AFTER UPDATE OF title ON conversations BEGIN"
    " INSERT INTO titles_fts (titles_fts, rowid, title)"
    " VALUES ('delete', old.rowid, old.title);"
    " INSERT INTO titles_fts (rowid, title) VALUES (new.rowid, new.title); END;"
    "INSERT INTO messages_fts (messages_fts) VALUES ('rebuild');"
    "INSERT INTO titles_fts (titles_fts) VALUES ('rebuild');",
    /* 2 -> 3: the turn settings a queued message was sent with */
    "ALTER TABLE messages ADD COLUMN options TEXT;",
    /* 3 -> 4: coders' versions by executable identity (store-coder.c), so
     * a turn runs no `--version` probe; recovery's look for running runs
     * reads a partial index instead of every run */
    "CREATE TABLE coder_versions ("
    " coder TEXT NOT NULL, path TEXT NOT NULL,"
    " dev INTEGER NOT NULL, ino INTEGER NOT NULL, size INTEGER NOT NULL,"
    " mtime_ns INTEGER NOT NULL, ctime_ns INTEGER NOT NULL,"
    " version TEXT CHECK (version IS NULL OR version <> ''),"
    " seen_ms INTEGER NOT NULL, PRIMARY KEY (coder, path)) WITHOUT ROWID;"
    "CREATE INDEX runs_running ON runs(state) WHERE state = 'running';",
    /* 4 -> 5: queue numbers (store-queue.c): each queued message gets the
     * next number of its conversation's counter, never given twice; the
     * messages queued now are numbered 1, 2, ... in their order */
    "ALTER TABLE conversations ADD COLUMN queue_last INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE messages ADD COLUMN queue_no INTEGER;"
    "UPDATE messages SET queue_no = (SELECT count(*) FROM messages m"
    " WHERE m.conversation = messages.conversation AND m.state = 'queued'"
    " AND m.role = 'user' AND m.seq <= messages.seq)"
    " WHERE state = 'queued' AND role = 'user';"
    "UPDATE conversations SET queue_last = (SELECT count(*) FROM messages m"
    " WHERE m.conversation = conversations.id AND m.queue_no IS NOT NULL);"
    "CREATE UNIQUE INDEX messages_queue_no ON messages(conversation, queue_no)"
    " WHERE queue_no IS NOT NULL;"
    /* and whether baton had to signal a run's coder (show --debug): codex
     * exits 0 on SIGTERM, so its exit status alone does not tell */
    "ALTER TABLE runs ADD COLUMN stop_stage INTEGER;",
    /* 5 -> 6: a queued message's settings in typed columns, read from the
     * text schema 3 kept ("approval=%d timeout_ms=%llu idle_timeout_ms=%llu
     * no_retry=%d"; a key that is missing stays NULL, which reads as 0, as
     * it did); the text column goes */
    "ALTER TABLE messages ADD COLUMN approval INTEGER;"
    "ALTER TABLE messages ADD COLUMN timeout_ms INTEGER;"
    "ALTER TABLE messages ADD COLUMN idle_timeout_ms INTEGER;"
    "ALTER TABLE messages ADD COLUMN no_retry INTEGER;"
    "UPDATE messages SET"
    " approval = " SETTING(
        "approval") ","
                    " timeout_ms = " SETTING(
                        "timeout_ms") ","
                                      " idle_timeout_ms = " SETTING(
                                          "idle_timeout_ms") ","
                                                             " no_retry = " SETTING(
                                                                 "no_retry") " WHERE options IS "
                                                                             "NOT NULL;"
                                                                             "ALTER TABLE messages "
                                                                             "DROP COLUMN options;",
    /* 6 -> 7: what a run changed in its git working tree: the snapshots
     * (tree ids) taken before it and after it (src/repo.h) */
    "ALTER TABLE runs ADD COLUMN tree_start TEXT; ALTER TABLE runs ADD COLUMN tree_end TEXT;",
    /* 7 -> 8: a conversation's own git worktree (`run --worktree`) */
    "ALTER TABLE conversations ADD COLUMN wt_path TEXT;"
    "ALTER TABLE conversations ADD COLUMN wt_branch TEXT;"
    "ALTER TABLE conversations ADD COLUMN wt_base TEXT;"
    "ALTER TABLE conversations ADD COLUMN wt_start TEXT;"
    "ALTER TABLE conversations ADD COLUMN wt_repo TEXT;",
    /* 8 -> 9: groups of conversations started together on one prompt
     * (`run -c a,b,c`); a group goes with its last conversation */
    "CREATE TABLE groups ("
    " id TEXT PRIMARY KEY NOT NULL,"
    " name TEXT NOT NULL,"
    " created_ms INTEGER NOT NULL);"
    "ALTER TABLE conversations ADD COLUMN group_id TEXT REFERENCES groups(id);"
    "CREATE INDEX conversations_group ON conversations(group_id) WHERE group_id IS NOT NULL;"
    "CREATE TRIGGER groups_emptied AFTER DELETE ON conversations WHEN old.group_id IS NOT NULL"
    " BEGIN DELETE FROM groups WHERE id = old.group_id AND NOT EXISTS"
    " (SELECT 1 FROM conversations WHERE group_id = old.group_id); END;",
    /* 9 -> 10: control requests to a run's owner (cancel, steer, a
     * person's decision), stored before they are delivered (store.h,
     * "controls"); they go with their conversation */
    "CREATE TABLE controls ("
    " id INTEGER PRIMARY KEY,"
    " conversation TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,"
    " run TEXT NOT NULL,"
    " kind TEXT NOT NULL,"
    " body TEXT NOT NULL DEFAULT '{}',"
    " created_ms INTEGER NOT NULL,"
    " state TEXT NOT NULL DEFAULT 'pending'"
    "  CHECK (state IN ('pending', 'done', 'refused', 'queued')),"
    " result TEXT,"
    " done_ms INTEGER);"
    "CREATE INDEX controls_pending ON controls(run, id) WHERE state = 'pending';",
};

#define N_MIGRATIONS ((int)BT_ARRAY_SIZE(migrations))

_Static_assert(BT_ARRAY_SIZE(migrations) == BT_STORE_SCHEMA_VERSION,
               "one migration per schema version");

static const char SQL_USER_VERSION[] = "PRAGMA user_version";

static int user_version(struct bt_store *s, int *v)
{
    sqlite3_stmt *q = bt_st_sql(s, SQL_USER_VERSION);
    if (!q)
        return BT_ESTORE;
    int rc = bt_st_step(s, q, "read schema version");
    if (rc != 1)
        return rc ? rc : bt_st_fail(s, BT_ESTORE, "read schema version: no result");
    *v = sqlite3_column_int(q, 0);
    return bt_st_done(q, 0);
}

static int check_version(struct bt_store *s, int v)
{
    if (v > N_MIGRATIONS)
        return bt_st_fail(s, BT_ESCHEMA,
                          "'%s' has schema version %d, newer than this baton's %d: upgrade baton",
                          s->db_path, v, N_MIGRATIONS);
    if (v < 0)
        return bt_st_fail(s, BT_ESCHEMA, "'%s' has an invalid schema version %d", s->db_path, v);
    return 0;
}

/* One migration step in one transaction; re-reads the version under the
 * write lock, so concurrent openers migrate once. */
static int migrate_step(struct bt_store *s)
{
    int v = 0, rc = bt_st_tx_begin(s);
    if (rc)
        return rc;
    rc = user_version(s, &v);
    if (rc == 0)
        rc = check_version(s, v);
    if (rc == 0 && v < N_MIGRATIONS) {
        char *what = bt_xasprintf("migrate schema %d to %d", v, v + 1);
        char *sql = bt_xasprintf("%s; PRAGMA user_version = %d;", migrations[v], v + 1);
        rc = bt_st_exec(s, sql, what);
        free(sql);
        free(what);
    }
    return bt_st_tx_end(s, rc);
}

int bt_st_migrate(struct bt_store *s)
{
    for (;;) {
        int v = 0, rc = user_version(s, &v);
        if (rc == 0)
            rc = check_version(s, v);
        if (rc || v == N_MIGRATIONS)
            return rc;
        rc = migrate_step(s);
        if (rc)
            return rc;
    }
}
