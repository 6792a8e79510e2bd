/* SPDX-License-Identifier: MIT */
/*
 * repo-diff: the changes between two snapshots (repo-snapshot.c), summed
 * up or as a unified diff (repo.h), read from baton's store of the
 * repository (repo-store.c).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "json.h"
#include "repo-int.h"

void bt_repo_changes_release(struct bt_repo_changes *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->v[i].path);
        free(c->v[i].old_path);
    }
    free(c->v);
    *c = (struct bt_repo_changes){0};
}

/* The diff from tree from to tree to, renames found; with typechange, a
 * path that changed kind (a file become a link) is one delta, else a
 * deletion and an addition (how `git diff` prints it). */
static int diff_trees(git_repository *repo, const char *from, const char *to, int typechange,
                      git_diff **diff, char **why)
{
    git_oid a, b;
    git_tree *ta = NULL, *tb = NULL;
    *diff = NULL;
    if (git_oid_fromstr(&a, from) != 0 || git_oid_fromstr(&b, to) != 0) {
        *why = bt_xasprintf("'%s' or '%s' is not a tree id", from, to);
        return -EINVAL;
    }
    int rc = 0;
    if (git_tree_lookup(&ta, repo, &a) != 0 || git_tree_lookup(&tb, repo, &b) != 0) {
        *why = bt_repo_why("a snapshot is not in baton's store of the repository any more");
        rc = BT_ENOTFOUND;
    } else {
        git_diff_find_options fo;
        git_diff_find_options_init(&fo, GIT_DIFF_FIND_OPTIONS_VERSION);
        fo.flags = GIT_DIFF_FIND_RENAMES;
        git_diff_options o;
        git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
        o.flags = typechange ? GIT_DIFF_INCLUDE_TYPECHANGE : 0;
        if (git_diff_tree_to_tree(diff, repo, ta, tb, &o) != 0 ||
            git_diff_find_similar(*diff, &fo) != 0) {
            *why = bt_repo_why("cannot compare the snapshots");
            rc = BT_EPROTO;
        }
    }
    git_tree_free(ta);
    git_tree_free(tb);
    return rc;
}

static char status_of(git_delta_t t)
{
    switch (t) {
    case GIT_DELTA_ADDED:
    case GIT_DELTA_COPIED: return 'A';
    case GIT_DELTA_DELETED: return 'D';
    case GIT_DELTA_RENAMED: return 'R';
    case GIT_DELTA_TYPECHANGE: return 'T';
    default: return 'M';
    }
}

/* A typechange's lines, as git counts them: the old blob's against the
 * new one's (libgit2 1.5.1 gives such a delta no hunks). */
static git_patch *typechange_patch(git_repository *repo, const git_diff_delta *d)
{
    git_blob *a = NULL, *b = NULL;
    git_patch *p = NULL;
    if (git_blob_lookup(&a, repo, &d->old_file.id) == 0 &&
        git_blob_lookup(&b, repo, &d->new_file.id) == 0 &&
        git_patch_from_blobs(&p, a, NULL, b, NULL, NULL) != 0)
        p = NULL;
    git_blob_free(a);
    git_blob_free(b);
    return p;
}

/* Delta i of diff as one change. */
static int change_of(git_repository *repo, git_diff *diff, size_t i, struct bt_repo_change *ch,
                     char **why)
{
    git_patch *p = NULL;
    const git_diff_delta *t = git_diff_get_delta(diff, i);
    if (t->status == GIT_DELTA_TYPECHANGE)
        p = typechange_patch(repo, t);
    else if (git_patch_from_diff(&p, diff, i) != 0) {
        *why = bt_repo_why("cannot compare a file");
        return BT_EPROTO;
    }
    const git_diff_delta *d = git_diff_get_delta(diff, i);
    size_t ctx = 0, adds = 0, dels = 0;
    *ch = (struct bt_repo_change){.status = status_of(d->status)};
    ch->path = bt_xstrdup(d->new_file.path ? d->new_file.path : d->old_file.path);
    if (ch->status == 'R')
        ch->old_path = bt_xstrdup(d->old_file.path);
    ch->binary = (d->flags & GIT_DIFF_FLAG_BINARY) != 0;
    if (p && !ch->binary && git_patch_line_stats(&ctx, &adds, &dels, p) == 0) {
        ch->added = (int64_t)adds;
        ch->removed = (int64_t)dels;
    }
    git_patch_free(p);
    return 0;
}

int bt_repo_changes(const char *dir, const char *snapshots, const char *from, const char *to,
                    struct bt_repo_changes *c, char **why)
{
    *c = (struct bt_repo_changes){0};
    *why = NULL;
    git_repository *user, *repo = NULL;
    int rc = bt_repo_store_open(dir, snapshots, &user, &repo, why);
    git_diff *diff = NULL;
    if (rc == 0)
        rc = diff_trees(repo, from, to, 1, &diff, why);
    size_t n = diff ? git_diff_num_deltas(diff) : 0;
    if (n)
        c->v = bt_xcalloc(n, sizeof(*c->v));
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = change_of(repo, diff, i, &c->v[c->n], why);
        if (rc == 0) {
            c->added += c->v[c->n].added;
            c->removed += c->v[c->n].removed;
            c->n++;
        }
    }
    if (rc)
        bt_repo_changes_release(c);
    git_diff_free(diff);
    git_repository_free(repo);
    git_repository_free(user);
    return rc;
}

/* A path as JSON text, which is UTF-8: bytes that are not (a file name
 * is any bytes) become U+FFFD. */
static void add_path_member(cJSON *o, const char *key, const char *path)
{
    char *text = bt_utf8_sanitize(path, strlen(path), NULL);
    cJSON_AddStringToObject(o, key, text);
    free(text);
}

void bt_repo_changes_json(const struct bt_repo_changes *c, struct bt_buf *out)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < c->n; i++) {
        const struct bt_repo_change *ch = &c->v[i];
        cJSON *o = cJSON_CreateObject();
        add_path_member(o, "path", ch->path);
        if (ch->old_path)
            add_path_member(o, "old_path", ch->old_path);
        cJSON_AddStringToObject(o, "status",
                                ch->status == 'A'   ? "added"
                                : ch->status == 'D' ? "deleted"
                                : ch->status == 'R' ? "renamed"
                                : ch->status == 'T' ? "typechange"
                                                    : "modified");
        if (ch->binary)
            cJSON_AddBoolToObject(o, "binary", 1);
        cJSON_AddNumberToObject(o, "added", (double)ch->added);
        cJSON_AddNumberToObject(o, "removed", (double)ch->removed);
        cJSON_AddItemToArray(a, o);
    }
    char *text = cJSON_PrintUnformatted(a);
    bt_buf_adds(out, text);
    free(text);
    cJSON_Delete(a);
}

char *bt_repo_changes_summary(const char *dir, const char *snapshots, const char *from,
                              const char *to, char **why)
{
    struct bt_repo_changes c;
    if (bt_repo_changes(dir, snapshots, from, to, &c, why) != 0)
        return NULL;
    struct bt_buf b = BT_BUF_INIT;
    bt_buf_adds(&b, "{\"files\":");
    bt_repo_changes_json(&c, &b);
    bt_buf_addf(&b, ",\"added\":%lld,\"removed\":%lld}", (long long)c.added, (long long)c.removed);
    bt_repo_changes_release(&c);
    return bt_buf_detach(&b, NULL);
}

/* git's default colours (color.diff): meta bold, frag cyan, old red, new
 * green. */
#define C_META "\033[1m"
#define C_FRAG "\033[36m"
#define C_OLD "\033[31m"
#define C_NEW "\033[32m"
#define C_RESET "\033[m"

struct printer {
    struct bt_buf *out;
    int colour;
};

static int print_line(const git_diff_delta *d, const git_diff_hunk *h, const git_diff_line *l,
                      void *data)
{
    (void)d;
    (void)h;
    struct printer *p = data;
    char o = l->origin;
    const char *colour = !p->colour                                                    ? NULL
                         : o == GIT_DIFF_LINE_FILE_HDR                                 ? C_META
                         : o == GIT_DIFF_LINE_HUNK_HDR                                 ? C_FRAG
                         : o == GIT_DIFF_LINE_ADDITION || o == GIT_DIFF_LINE_ADD_EOFNL ? C_NEW
                         : o == GIT_DIFF_LINE_DELETION || o == GIT_DIFF_LINE_DEL_EOFNL ? C_OLD
                                                                                       : NULL;
    const char *s = l->content, *end = l->content + l->content_len;
    int prefix =
        o == GIT_DIFF_LINE_CONTEXT || o == GIT_DIFF_LINE_ADDITION || o == GIT_DIFF_LINE_DELETION;
    if (!colour) {
        if (prefix)
            bt_buf_addc(p->out, o);
        bt_buf_add(p->out, s, (size_t)(end - s));
        return 0;
    }
    /* each line coloured on its own, as git does (a file header is several) */
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
        bt_buf_adds(p->out, colour);
        if (prefix)
            bt_buf_addc(p->out, o);
        bt_buf_add(p->out, s, n);
        bt_buf_adds(p->out, C_RESET);
        if (nl)
            bt_buf_addc(p->out, '\n');
        s += n + (nl ? 1 : 0);
    }
    return 0;
}

int bt_repo_diff(const char *dir, const char *snapshots, const char *from, const char *to,
                 int colour, struct bt_buf *out, char **why)
{
    *why = NULL;
    git_repository *user, *repo = NULL;
    int rc = bt_repo_store_open(dir, snapshots, &user, &repo, why);
    git_diff *diff = NULL;
    if (rc == 0)
        rc = diff_trees(repo, from, to, 0, &diff, why);
    struct printer p = {.out = out, .colour = colour};
    if (rc == 0 && git_diff_print(diff, GIT_DIFF_FORMAT_PATCH, print_line, &p) != 0) {
        *why = bt_repo_why("cannot print the diff");
        rc = BT_EPROTO;
    }
    git_diff_free(diff);
    git_repository_free(repo);
    git_repository_free(user);
    return rc;
}

char *bt_repo_top(const char *dir, char **why)
{
    git_repository *repo = NULL;
    *why = NULL;
    if (bt_repo_open(dir, &repo, why) != 0)
        return NULL;
    const char *wd = git_repository_workdir(repo);
    char *top = NULL;
    if (!wd) {
        *why = bt_xasprintf("the repository of %s is bare: it has no working tree", dir);
    } else {
        size_t n = strlen(wd);
        top = bt_xstrndup(wd, n > 1 && wd[n - 1] == '/' ? n - 1 : n);
    }
    git_repository_free(repo);
    return top;
}
