/* SPDX-License-Identifier: MIT */
/*
 * repo-filter: whether a repository sends files through a git filter
 * driver (repo-int.h, bt_repo_filter_used). libgit2 runs only its own
 * filters (line endings, ident), not the clean/smudge/process commands of
 * gitattributes(5) "filter", so where one is in use (git-lfs, git-crypt)
 * what baton would check out or commit is the raw form: pointer files,
 * or a secret in plain text. The attributes looked at: every
 * .gitattributes of a commit's tree, $GIT_DIR/info/attributes, and the
 * user's own file (core.attributesFile).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "repo-int.h"

/* The filters with a command configured: "lfs", "crypt", ... */
static void drivers(git_repository *repo, struct bt_strv *out)
{
    git_config *cfg = NULL;
    git_config_iterator *it = NULL;
    git_config_entry *e;
    if (git_repository_config_snapshot(&cfg, repo) != 0 || git_config_iterator_new(&it, cfg) != 0) {
        git_config_free(cfg);
        return;
    }
    while (git_config_next(&e, it) == 0) {
        const char *name = e->name, *dot = strrchr(name, '.');
        if (strncmp(name, "filter.", 7) != 0 || !dot || dot <= name + 7)
            continue;
        if (strcmp(dot, ".clean") == 0 || strcmp(dot, ".smudge") == 0 ||
            strcmp(dot, ".process") == 0)
            bt_strv_push_take(out, bt_xstrndup(name + 7, (size_t)(dot - name - 7)));
    }
    git_config_iterator_free(it);
    git_config_free(cfg);
}

/* The first driver of d that text (attributes) gives a file, or NULL. */
static const char *used_in(const char *text, size_t len, const struct bt_strv *d)
{
    for (size_t i = 0; i + 7 < len; i++) {
        if (memcmp(text + i, "filter=", 7) != 0 || (i && text[i - 1] != ' ' && text[i - 1] != '\t'))
            continue;
        const char *v = text + i + 7;
        size_t n = 0;
        while (i + 7 + n < len && v[n] != ' ' && v[n] != '\t' && v[n] != '\n' && v[n] != '\r')
            n++;
        for (size_t k = 0; k < d->n; k++)
            if (strlen(d->v[k]) == n && memcmp(d->v[k], v, n) == 0)
                return d->v[k];
    }
    return NULL;
}

struct walk {
    git_repository *repo;
    const struct bt_strv *drivers;
    const char *found;
};

static int visit(const char *root, const git_tree_entry *e, void *data)
{
    struct walk *w = data;
    git_blob *blob = NULL;
    (void)root;
    if (git_tree_entry_type(e) != GIT_OBJECT_BLOB ||
        strcmp(git_tree_entry_name(e), ".gitattributes") != 0 ||
        git_blob_lookup(&blob, w->repo, git_tree_entry_id(e)) != 0)
        return 0;
    w->found = used_in(git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob), w->drivers);
    git_blob_free(blob);
    return w->found ? -1 : 0; /* found: the walk stops */
}

/* The first driver the file at path gives a file, or NULL. */
static const char *used_in_file(const char *path, const struct bt_strv *d)
{
    FILE *f = fopen(path, "r");
    char line[4096];
    const char *found = NULL;
    while (f && !found && fgets(line, sizeof line, f))
        found = used_in(line, strlen(line), d);
    if (f)
        fclose(f);
    return found;
}

/* The user's attributes file: core.attributesFile (~/ expanded), else
 * $XDG_CONFIG_HOME/git/attributes, else ~/.config/git/attributes (git's
 * gitattributes(5)); owned, or NULL. */
static char *global_attributes(git_repository *repo)
{
    git_config *cfg = NULL;
    git_buf v = {0};
    char *path = NULL;
    const char *home = getenv("HOME"), *xdg = getenv("XDG_CONFIG_HOME");
    if (git_repository_config_snapshot(&cfg, repo) == 0 &&
        git_config_get_string_buf(&v, cfg, "core.attributesFile") == 0 && v.size)
        path = strncmp(v.ptr, "~/", 2) == 0 && home ? bt_xasprintf("%s/%s", home, v.ptr + 2)
                                                    : bt_xstrdup(v.ptr);
    else if (xdg && *xdg)
        path = bt_xasprintf("%s/git/attributes", xdg);
    else if (home)
        path = bt_xasprintf("%s/.config/git/attributes", home);
    git_buf_dispose(&v);
    git_config_free(cfg);
    return path;
}

int bt_repo_filter_used(git_repository *repo, git_commit *commit, char **name)
{
    struct bt_strv d;
    bt_strv_init(&d);
    drivers(repo, &d);
    struct walk w = {repo, &d, NULL};
    git_tree *tree = NULL;
    if (d.n && git_commit_tree(&tree, commit) == 0)
        git_tree_walk(tree, GIT_TREEWALK_PRE, visit, &w);
    git_tree_free(tree);
    if (d.n && !w.found) {
        char *info = bt_xasprintf("%sinfo/attributes", git_repository_commondir(repo));
        w.found = used_in_file(info, &d);
        free(info);
    }
    if (d.n && !w.found) { /* the user's own: core.attributesFile, else git's default */
        char *global = global_attributes(repo);
        w.found = global ? used_in_file(global, &d) : NULL;
        free(global);
    }
    if (w.found)
        *name = bt_xstrdup(w.found);
    bt_strv_release(&d);
    return w.found != NULL;
}
