/* SPDX-License-Identifier: MIT */
/*
 * service-work: the operations on what conversations changed, one function
 * each for every front end (the CLI's diff, keep, group and run -c; baton
 * serve's routes; the page through them): a turn's or a conversation's
 * changes from the snapshots its runs kept (docs/snapshots.md), keeping a
 * conversation's own worktree (run --worktree) in the branch it started
 * from, the summary of a group's conversations side by side, and one
 * prompt fanned out to several coders in a group. Each returns what it did
 * (or why not, as a sentence) and prints nothing.
 *
 *   service-worktree.c  bt_service_conversation_new (with a worktree of its own)
 *   service-diff.c      bt_service_diff
 *   service-keep.c      bt_service_keep, bt_service_worktree_remove
 *   service-group.c     bt_service_member_of, bt_service_group_show
 *   service-fanout.c    bt_service_fanout
 */
#ifndef BT_SERVICE_WORK_H
#define BT_SERVICE_WORK_H

#include "repo.h"
#include "service.h"

/* --- service-diff.c --------------------------------------------------- */

/* What bt_service_diff is asked to make (flags, or'ed). */
enum {
    BT_SERVICE_DIFF_PATCH = 1,   /* the unified diff, as `git diff -M` prints it */
    BT_SERVICE_DIFF_CHANGES = 2, /* the changes as turn.completed's "changes" holds them */
    BT_SERVICE_DIFF_FILES = 4,   /* the changes as a struct (for a diffstat) */
    BT_SERVICE_DIFF_TOP = 8,     /* the top directory the paths are relative to */
};

struct bt_service_diff {
    enum bt_service_result result; /* OK; USAGE: no such turn; FAILED: unknown
                                      changes, none recorded, the store or git */
    char *message;                 /* why not OK (a sentence, owned), else NULL */
    int64_t turn;                  /* as asked: 0 the whole conversation */
    char from[BT_REPO_OID_SIZE];   /* the snapshot before (hex) */
    char to[BT_REPO_OID_SIZE];     /* the snapshot after (hex) */
    int nothing;                   /* from and to are the same tree */
    char *shared_dir;              /* the conversation's directory when it is
                                      shared (not a worktree of its own) and
                                      something changed: its changes may hold
                                      the user's own edits (owned), else NULL */
    struct bt_buf patch;           /* PATCH: the diff (empty: no change) */
    char *changes;                 /* CHANGES: {"files":[…],"added":N,"removed":N}
                                      (repo.h, bt_repo_changes_summary; owned) */
    struct bt_repo_changes files;  /* FILES: the changes */
    char *top;                     /* TOP: the working tree's top directory, the
                                      paths' base (a worktree's own path), or
                                      NULL when it cannot be found (owned) */
};

/* What turn (1, 2, ...; 0: all turns) of conversation conv (full id)
 * changed in its working tree, from the snapshots its runs kept (a turn
 * retried is its last run's; the whole conversation is the first snapshot
 * to the last). want is the or of BT_SERVICE_DIFF_*; colour asks for
 * git's colours in the patch. Returns 0 with out filled, or a negative
 * error with out->result and out->message (BT_ENOTFOUND: no such turn, or
 * no changes recorded; BT_EPROTO: git could not read the snapshots).
 * Release out with bt_service_diff_release whatever it returns. */
int bt_service_diff(struct bt_store *s, const char *conv, int64_t turn, int want, int colour,
                    struct bt_service_diff *out);
void bt_service_diff_release(struct bt_service_diff *d);

/* --- service-worktree.c ------------------------------------------------ */

/* Store a new conversation with id (made beforehand with bt_id_new: an ACP
 * session's, handed out before its first prompt) for t->coder and
 * t->model in t->cwd, titled by t->prompt, with no turn, as
 * bt_service_create (service-conv.h) does; with t->worktree in a git
 * worktree of its own of t->cwd's repository (on t->branch or
 * baton/<short id>), where its turns run: its cwd is then the worktree's.
 * Returns 0, or an error with out->result and out->message (no
 * repository: BT_ENOTFOUND, USAGE; as bt_service_create: an unknown or
 * uninstalled coder, the store; a worktree made for it is then taken
 * back). Free out->message. */
int bt_service_conversation_new(struct bt_store *s, const struct bt_service_turn *t,
                                const char id[BT_ID_SIZE], struct bt_service_outcome *out);

/* --- service-keep.c --------------------------------------------------- */

/* c's worktree as repo.h takes it (borrowed strings; path NULL: none). */
struct bt_repo_worktree bt_service_worktree_of(const struct bt_store_conversation *c);

/* Remove c's worktree and its branch, losing what drop allows (repo.h).
 * Returns 0 (*leftover, owned, says what was left of it when it was half
 * gone already, else NULL), BT_ENOTFOUND when c has none, or another
 * error with *why (owned). */
int bt_service_worktree_remove(const struct bt_store_conversation *c, enum bt_repo_drop drop,
                               char **leftover, char **why);

/* A worktree a keep removed. */
struct bt_service_pruned {
    char conversation[BT_ID_SIZE];
    char *path, *branch; /* the worktree and its branch (owned) */
    char *leftover;      /* what was left of it when it was half gone already
                            (owned), else NULL */
};

struct bt_service_kept {
    enum bt_service_result result; /* OK; USAGE: no worktree of its own, a turn
                                      runs, nothing to keep onto; FAILED */
    char *message;                 /* why not OK (owned), else NULL */
    char conversation[BT_ID_SIZE];
    char *branch, *base;                /* the worktree's branch and the one it
                                           started from (owned) */
    struct bt_repo_kept kept;           /* what bt_repo_keep did */
    int pruned;                         /* prune: the worktree and branch are gone:
                                           pruned_v[0] */
    struct bt_service_pruned *pruned_v; /* the worktrees removed: this
                                           conversation's first, then the
                                           group's others' */
    size_t pruned_n;
    struct bt_strv notes; /* sentences about what was kept and why
                             (a turn of another runs) */
};

/* Bring the work of conversation conv's own worktree into its base branch
 * (repo.h, bt_repo_keep: its changes committed on its branch, then a
 * fast-forward or a merge; a conflict leaves the base as it was); with
 * prune, then remove the worktree and branch, and in a group the other
 * conversations' worktrees and branches with their work (their
 * conversations stay; one with a turn running, moved or locked is kept,
 * said in notes). Returns 0, or a negative error with out->result and
 * out->message (-EINVAL: USAGE). Release out whatever it returns. */
int bt_service_keep(struct bt_store *s, const char *conv, int prune, struct bt_service_kept *out);
void bt_service_kept_release(struct bt_service_kept *k);
/* "merge", "fast-forward" or "none" (static). */
const char *bt_service_kept_how(enum bt_repo_kept_how how);

/* --- service-group.c -------------------------------------------------- */

/* One conversation of a group, summed over its runs. */
struct bt_service_member {
    const char *state;   /* its last run's state ("completed"), "new" without
                            one (static) */
    int64_t duration_ms; /* its runs' time, a running one's until now */
    int64_t tokens;      /* input and output tokens; -1: none reported */
    double cost_usd;     /* < 0: none reported */
    int64_t files;       /* files changed; -1: nothing recorded (outside git) */
    int64_t added, removed;
};

/* Sum the runs of c into *m. 0 or BT_ESTORE. */
int bt_service_member_of(struct bt_store *s, const struct bt_store_conversation *c,
                         struct bt_service_member *m);

struct bt_service_group {
    struct bt_store_group group;        /* id, name, created */
    struct bt_store_conversation *conv; /* its conversations, oldest first */
    struct bt_service_member *member;   /* conv[i]'s sums */
    size_t n;
};

/* Group id (a full id) with its conversations side by side. 0,
 * BT_ENOTFOUND, or BT_ESTORE. Release out whatever it returns. */
int bt_service_group_show(struct bt_store *s, const char *id, struct bt_service_group *out);
void bt_service_group_release(struct bt_service_group *g);

/* --- service-fanout.c ------------------------------------------------- */

/* One coder of a fan-out. */
struct bt_service_fanned {
    char coder[64];                /* as named */
    char conversation[BT_ID_SIZE]; /* "" when none was made */
    int64_t queued;                /* the prompt's message, waiting for a worker */
    enum bt_service_result result; /* OK once made; else why not */
    char *message;                 /* why it was not made (owned), else NULL */
};

struct bt_service_fanout {
    char group[BT_ID_SIZE]; /* "" when the group was not made */
    struct bt_service_fanned *v;
    size_t n;
    char *message; /* why nothing was made (owned), else NULL */
    enum bt_service_result result;
};

/* The most coders one fan-out takes. */
#define BT_SERVICE_FANOUT_MAX 16

/* Fan the turn t out to each of coders (n names, each a known coder, at
 * most BT_SERVICE_FANOUT_MAX): a new group named after the prompt, and in
 * it one new conversation per coder (each in a worktree of its own with
 * t->worktree) with t's prompt stored queued for a worker to take (t->queue
 * is taken as ALWAYS). A coder that cannot start (not installed, say) is
 * one member's result, the others go on. Returns 0 when at least one
 * conversation was made; a negative error with out->result and
 * out->message when nothing was (an unknown coder, none or too many,
 * t->branch given, no prompt: USAGE, and nothing is made; when no member
 * could be made, the first one's reason). Release out whatever it
 * returns. */
int bt_service_fanout(struct bt_store *s, const struct bt_service_turn *t,
                      const char *const *coders, size_t n, struct bt_service_fanout *out);
void bt_service_fanout_release(struct bt_service_fanout *f);

/* Split "a,b,c" into up to max names (owned in v: release it); 0, or -1
 * for an empty or over-long name (64 bytes) or too many. */
int bt_service_coder_list(const char *list, struct bt_strv *v, size_t max);

#endif
