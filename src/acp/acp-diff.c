/* SPDX-License-Identifier: MIT */
/*
 * acp-diff: a file_change item's normalized changes (docs/events.md,
 * "changes") as ACP tool call content (acp-map.h). ACP's Diff is {path
 * (absolute), oldText (null for a new file), newText}; a coder that gives
 * unified hunks (codex) gets one Diff per hunk, its old side and its new
 * side, so the editor shows each hunk where the whole file is not known.
 * A turn's changes from its snapshots (service-work.h) go the same way,
 * as one tool call at the turn's end.
 */
#include <stdlib.h>
#include <string.h>

#include "acp-map.h"
#include "json.h"
#include "service-work.h"
#include "util.h"

/* path made absolute against cwd (owned). */
static char *absolute(const char *path, const char *cwd)
{
    if (path[0] == '/' || !cwd || !cwd[0])
        return bt_xstrdup(path);
    size_t n = strlen(cwd);
    return bt_xasprintf("%s%s%s", cwd, n && cwd[n - 1] == '/' ? "" : "/", path);
}

static void add_diff(cJSON *content, const char *path, const char *old_text, size_t old_len,
                     const char *new_text, size_t new_len)
{
    cJSON *d = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "type", "diff");
    cJSON_AddStringToObject(d, "path", path);
    if (old_text) {
        char *t = bt_xstrndup(old_text, old_len);
        cJSON_AddStringToObject(d, "oldText", t);
        free(t);
    }
    char *t = bt_xstrndup(new_text ? new_text : "", new_len);
    cJSON_AddStringToObject(d, "newText", t);
    free(t);
    cJSON_AddItemToArray(content, d);
}

/* One hunk's two sides, built line by line. */
struct hunk {
    struct bt_buf old, new;
    int open;
};

static void hunk_flush(struct hunk *h, cJSON *content, const char *path, int *n)
{
    if (h->open) {
        add_diff(content, path, h->old.data ? h->old.data : "", h->old.len,
                 h->new.data ? h->new.data : "", h->new.len);
        (*n)++;
    }
    bt_buf_release(&h->old);
    bt_buf_release(&h->new);
    h->open = 0;
}

/* Unified hunks ("@@ -a,b +c,d @@" then ' ', '-' and '+' lines): one Diff
 * each. Lines before the first hunk (---/+++ headers) and "\ No newline"
 * markers are no text of the file. Returns the number added. */
static int add_hunks(cJSON *content, const char *path, const char *diff)
{
    struct hunk h = {.old = BT_BUF_INIT, .new = BT_BUF_INIT};
    int n = 0;
    for (const char *p = diff; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) + 1 : strlen(p);
        if (strncmp(p, "@@", 2) == 0) {
            hunk_flush(&h, content, path, &n);
            h.open = 1;
        } else if (h.open && (*p == ' ' || *p == '-')) {
            bt_buf_add(&h.old, p + 1, len - 1);
        }
        if (h.open && (*p == ' ' || *p == '+'))
            bt_buf_add(&h.new, p + 1, len - 1);
        p += len;
    }
    hunk_flush(&h, content, path, &n);
    return n;
}

/* One change: its Diff(s), or its diff as text when it has no hunks. */
static int add_change(cJSON *content, cJSON *locations, const cJSON *c, const char *cwd)
{
    const char *path = bt_json_str(c, "path"), *kind = bt_json_str(c, "kind");
    const char *diff = bt_json_str(c, "diff"), *move_to = bt_json_str(c, "move_to");
    const char *old_text = bt_json_str(c, "old_text"), *new_text = bt_json_str(c, "new_text");
    if (!path || !kind)
        return 0;
    char *abs = absolute(path, cwd);
    cJSON *loc = cJSON_CreateObject();
    cJSON_AddStringToObject(loc, "path", abs);
    cJSON_AddItemToArray(locations, loc);
    if (move_to) {
        char *to = absolute(move_to, cwd);
        loc = cJSON_CreateObject();
        cJSON_AddStringToObject(loc, "path", to);
        cJSON_AddItemToArray(locations, loc);
        free(to);
    }
    int n = 0;
    if (strcmp(kind, "delete") == 0) {
        add_diff(content, abs, old_text ? old_text : "", old_text ? strlen(old_text) : 0, "", 0);
        n = 1;
    } else if (new_text) {
        /* add and write: no old text known; update: the part replaced */
        add_diff(content, abs, old_text, old_text ? strlen(old_text) : 0, new_text,
                 strlen(new_text));
        n = 1;
    } else if (diff && (n = add_hunks(content, abs, diff)) == 0 && diff[0]) {
        cJSON *block = cJSON_CreateObject();
        cJSON_AddStringToObject(block, "type", "content");
        cJSON *text = cJSON_AddObjectToObject(block, "content");
        cJSON_AddStringToObject(text, "type", "text");
        cJSON_AddStringToObject(text, "text", diff);
        cJSON_AddItemToArray(content, block);
        n = 1;
    }
    free(abs);
    return n;
}

char *bt_acp_diff_title(const char *changes_json)
{
    cJSON *changes = changes_json ? cJSON_Parse(changes_json) : NULL;
    const char *first = NULL;
    int n = 0; /* files: the edits of one file are one */
    const cJSON *c, *d;
    cJSON_ArrayForEach(c, changes)
    {
        const char *path = bt_json_str(c, "path");
        int seen = !path;
        for (d = changes->child; !seen && d != c; d = d->next)
            seen = bt_json_str(d, "path") && strcmp(bt_json_str(d, "path"), path) == 0;
        if (!seen && !n++)
            first = path;
    }
    char *title = !first  ? NULL
                  : n > 1 ? bt_xasprintf("%s and %d more file%s", first, n - 1, n > 2 ? "s" : "")
                          : bt_xstrdup(first);
    cJSON_Delete(changes);
    return title;
}

int bt_acp_diff_add(cJSON *content, cJSON *locations, const char *changes_json, const char *cwd)
{
    cJSON *changes = changes_json ? cJSON_Parse(changes_json) : NULL;
    const cJSON *c;
    int n = 0;
    cJSON_ArrayForEach(c, changes)
    {
        n += add_change(content, locations, c, cwd);
    }
    cJSON_Delete(changes);
    return n;
}

/* The path a section of a unified patch is about ("+++ b/PATH", or "---
 * a/PATH" for a file deleted), owned; NULL when git quoted it (an unusual
 * name) or there is none. */
static char *section_path(const char *sec, size_t len)
{
    const char *minus = NULL, *plus = NULL;
    for (const char *p = sec; p < sec + len;) {
        const char *nl = memchr(p, '\n', (size_t)(sec + len - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(sec + len - p);
        if (n > 6 && strncmp(p, "--- a/", 6) == 0 && !minus)
            minus = p;
        if (n > 6 && strncmp(p, "+++ b/", 6) == 0 && !plus)
            plus = p;
        if (strncmp(p, "@@", 2) == 0)
            break;
        p += n + 1;
    }
    const char *at = plus ? plus : minus;
    if (!at)
        return NULL;
    at += 6;
    return bt_xstrndup(at, strcspn(at, "\n"));
}

cJSON *bt_acp_diff_turn(const char *run, int64_t turn, const struct bt_service_diff *d)
{
    if (!d->files.n || !d->patch.len)
        return NULL;
    /* the patch's sections as item.changes would carry them: one update
     * with its unified diff per file, in the order git printed them (the
     * files' order), a quoted name taken from the file list */
    cJSON *changes = cJSON_CreateArray();
    const char *patch = d->patch.data, *end = patch + d->patch.len;
    size_t i = 0;
    for (const char *p = patch; p < end; i++) {
        const char *next = p;
        do {
            const char *nl = memchr(next, '\n', (size_t)(end - next));
            next = nl ? nl + 1 : end;
        } while (next < end && strncmp(next, "diff --git ", 11) != 0);
        char *path = section_path(p, (size_t)(next - p));
        if (!path && i < d->files.n)
            path = bt_xstrdup(d->files.v[i].path);
        if (path) {
            cJSON *c = cJSON_CreateObject();
            cJSON_AddStringToObject(c, "path", path);
            cJSON_AddStringToObject(c, "kind", "update");
            char *text = bt_xstrndup(p, (size_t)(next - p));
            cJSON_AddStringToObject(c, "diff", text);
            free(text);
            cJSON_AddItemToArray(changes, c);
        }
        free(path);
        p = next;
    }
    char *json = cJSON_PrintUnformatted(changes);
    cJSON_Delete(changes);
    cJSON *u = cJSON_CreateObject();
    char *id = bt_xasprintf("changes-%s", run);
    char *files = bt_acp_diff_title(json);
    char *title = bt_xasprintf("Changes of turn %lld: %s", (long long)turn, files ? files : "");
    cJSON_AddStringToObject(u, "sessionUpdate", "tool_call");
    cJSON_AddStringToObject(u, "toolCallId", id);
    cJSON_AddStringToObject(u, "title", title);
    cJSON_AddStringToObject(u, "kind", "edit");
    cJSON_AddStringToObject(u, "status", "completed");
    cJSON *content = cJSON_AddArrayToObject(u, "content");
    cJSON *locations = cJSON_AddArrayToObject(u, "locations");
    bt_acp_diff_add(content, locations, json, d->top);
    free(title);
    free(files);
    free(id);
    free(json);
    return u;
}

cJSON *bt_acp_changes(struct bt_store *s, const char *conv, const char *run, int64_t turn)
{
    struct bt_service_diff d;
    int want = BT_SERVICE_DIFF_PATCH | BT_SERVICE_DIFF_FILES | BT_SERVICE_DIFF_TOP;
    cJSON *u =
        bt_service_diff(s, conv, turn, want, 0, &d) == 0 ? bt_acp_diff_turn(run, turn, &d) : NULL;
    bt_service_diff_release(&d);
    return u;
}
