/* SPDX-License-Identifier: MIT */
/* rebuild: a run rebuilt from its raw output (see rebuild.h). */
#include "rebuild.h"
#include "repo.h"

#include <stdlib.h>
#include <string.h>

#include "coder.h"
#include "error.h"
#include "runfile.h"

/* One event of the replay, encoded with its seq moved by shift. */
struct replayed {
    const char *type; /* static event type name */
    int64_t seq;      /* in the replay, from 1 */
    int64_t ts_ms;
    char *json;
    size_t len;
};

struct collect {
    struct replayed *v;
    size_t n, cap;
    int64_t shift; /* added to each seq in the json */
    struct bt_buf scratch;
};

static void on_event(void *data, const struct bt_event *ev, const char *json, size_t len)
{
    struct collect *c = data;
    (void)json;
    (void)len;
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 64;
        c->v = bt_xrealloc(c->v, c->cap * sizeof *c->v);
    }
    struct bt_event moved = *ev;
    moved.seq += c->shift;
    bt_buf_reset(&c->scratch);
    bt_event_to_json(&moved, &c->scratch);
    struct replayed *r = &c->v[c->n++];
    r->type = bt_event_type_name(ev->type);
    r->seq = ev->seq;
    r->ts_ms = ev->ts_ms;
    r->len = c->scratch.len;
    r->json = bt_xstrndup(c->scratch.data, c->scratch.len);
}

static void collect_release(struct collect *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->v[i].json);
    free(c->v);
    bt_buf_release(&c->scratch);
    memset(c, 0, sizeof *c);
}

/* What the store holds of the run: the types of its events, in seq order. */
struct stored {
    char **type;
    int64_t n;
    int gap; /* seq not 1..n */
};

static int on_stored(void *data, const struct bt_store_event *ev)
{
    struct stored *st = data;
    st->type = bt_xrealloc(st->type, (size_t)(st->n + 1) * sizeof *st->type);
    st->type[st->n++] = bt_xstrdup(ev->type);
    st->gap |= ev->seq != st->n;
    return 0;
}

static void stored_release(struct stored *st)
{
    for (int64_t i = 0; i < st->n; i++)
        free(st->type[i]);
    free(st->type);
}

void bt_rebuild_report_release(struct bt_rebuild_report *rep)
{
    free(rep->problem);
    memset(rep, 0, sizeof *rep);
}

/* The run's raw stdout into out: the zstd file, or an older plain one. */
static int read_raw(struct bt_store *s, const char *run, struct bt_buf *out, int *truncated,
                    char **name)
{
    static const char *const suffixes[] = {".out" BT_RUNFILE_SUFFIX, ".out"};
    int rc = -ENOENT;
    for (size_t i = 0; rc == -ENOENT && i < BT_ARRAY_SIZE(suffixes); i++) {
        free(*name);
        *name = bt_xasprintf("runs/%s%s", run, suffixes[i]);
        char *path = bt_store_run_file(s, run, suffixes[i]);
        bt_buf_reset(out);
        rc = path ? bt_runfile_read(path, out, truncated) : -EINVAL;
        free(path);
    }
    if (rc == -ENOENT) {
        free(*name);
        *name = bt_xasprintf("runs/%s.out%s", run, BT_RUNFILE_SUFFIX);
    }
    return rc;
}

static enum bt_store_run_state state_of(enum bt_turn_status st)
{
    switch (st) {
    case BT_TURN_COMPLETED: return BT_STORE_RUN_COMPLETED;
    case BT_TURN_CANCELLED: return BT_STORE_RUN_CANCELLED;
    case BT_TURN_INTERRUPTED: return BT_STORE_RUN_INTERRUPTED;
    case BT_TURN_FAILED: break;
    }
    return BT_STORE_RUN_FAILED;
}

/* Everything one rebuild holds. */
struct job {
    struct bt_store *s;
    const struct bt_rebuild *o;
    struct bt_store_conversation conv;
    struct bt_turn_options to;
    struct bt_turn_replay r;
    struct bt_turn_result res;
    struct collect c;
    struct stored st;
    struct bt_buf raw;
    char *raw_name; /* runs/<run>.out.zst, for messages */
    int truncated;
    char *changes; /* turn.completed's changes, from the run's snapshots */
};

/* Replay the raw stream, each event's seq moved by shift. */
static int replay(struct job *j, int64_t shift)
{
    collect_release(&j->c);
    bt_turn_result_release(&j->res);
    j->c.shift = shift;
    bt_buf_init(&j->c.scratch);
    return bt_turn_replay(&j->to, &j->r, &j->res);
}

/* Where the replay's end starts: its error event (a failed turn), then
 * turn.completed. */
static size_t end_start(const struct job *j)
{
    size_t n = j->c.n;
    if (n >= 2 && j->res.status == BT_TURN_FAILED && strcmp(j->c.v[n - 2].type, "error") == 0)
        return n - 2;
    return n ? n - 1 : 0;
}

static int setup(struct job *j, struct bt_rebuild_report *rep)
{
    const struct bt_store_run *run = j->o->run;
    const struct bt_coder *coder = bt_coder_find(run->coder);
    if (!coder) {
        rep->problem = bt_xasprintf("its coder '%s' is not one this baton knows", run->coder);
        return 0;
    }
    int rc = bt_store_conversation_get(j->s, run->conversation, &j->conv);
    if (rc)
        return rc;
    rc = read_raw(j->s, run->id, &j->raw, &j->truncated, &j->raw_name);
    if (rc == -ENOENT && !run->pgid)
        return 0; /* its coder never started (its worker died waiting for a turn
                     slot, say): nothing to rebuild, nothing to tell */
    if (rc && rc != BT_ECORRUPT) {
        rep->problem = bt_xasprintf("its raw output %s cannot be read: %s", j->raw_name,
                                    rc == -EINVAL ? "not a regular file" : bt_strerror(rc));
        return 0;
    }
    if (rc == BT_ECORRUPT) /* what the blocks before the damage held is used */
        rep->problem = bt_xasprintf("its raw output %s is damaged; what comes before the damage "
                                    "was used",
                                    j->raw_name);
    const struct bt_turn_options *own = j->o->turn;
    j->to = (struct bt_turn_options){
        .coder = coder,
        .coder_version = own ? own->coder_version : run->coder_version,
        .cfg = own ? own->cfg
                   : (struct bt_runner_config){.prompt = run->prompt ? run->prompt : "",
                                               .model = run->model,
                                               .cwd = j->conv.cwd,
                                               .approval = BT_APPROVAL_DENY,
                                               .native_session_id = NULL,
                                               .native_session_path = j->conv.native_session_path},
        .run_id = run->id,
        .conversation_id = run->conversation,
        .on_event = on_event,
        .data = &j->c,
    };
    if (!j->o->changes_json && run->tree_start && run->tree_end) {
        char *gone = NULL; /* a repository gone since: no changes, as outside git */
        char *snapshots = bt_xasprintf("%s/snapshots", bt_store_home(j->s));
        j->changes =
            bt_repo_changes_summary(j->conv.cwd, snapshots, run->tree_start, run->tree_end, &gone);
        free(snapshots);
        free(gone);
    }
    j->r = (struct bt_turn_replay){.out = j->raw.data ? j->raw.data : "",
                                   .changes_json =
                                       j->o->changes_json ? j->o->changes_json : j->changes,
                                   .len = j->raw.len,
                                   .end = j->o->end,
                                   .cancelled = run->cancel_ms != 0,
                                   .duration_ms = bt_now_ms() - run->started_ms};
    return bt_store_event_each(j->s, run->id, 1, on_stored, &j->st);
}

/* The stored events that agree with the replay, up to limit. */
static int64_t agreeing(const struct job *j, int64_t limit)
{
    int64_t k = 0;
    while (k < limit && k < j->st.n && (size_t)k < j->c.n &&
           strcmp(j->st.type[k], j->c.v[k].type) == 0)
        k++;
    return k;
}

/* Why the store lacked events, for the user. */
static const char *why(const struct job *j)
{
    return j->o->why ? j->o->why
                     : "the store did not have them: its writes failed, or the baton process "
                       "running the turn ended first";
}

static char *warning_json(const struct job *j, int64_t seq)
{
    char *msg = bt_xasprintf("the events from here on were rebuilt from the coder's raw output "
                             "(%s), because %s",
                             j->raw_name, why(j));
    struct bt_event w;
    bt_event_init(&w, BT_EVENT_WARNING);
    w.seq = seq;
    w.run = j->o->run->id;
    w.conversation = j->o->run->conversation;
    w.ts_ms = bt_now_ms();
    w.kind = BT_REBUILD_WARNING;
    w.message = msg;
    struct bt_buf b = BT_BUF_INIT;
    bt_event_to_json(&w, &b);
    free(msg);
    return bt_buf_detach(&b, NULL);
}

/* Store the rebuilt run: the warning at kept + 1, then the replay's events
 * from index from on. */
static int store(struct job *j, int64_t kept, size_t from, struct bt_rebuild_report *rep)
{
    const struct bt_store_run *run = j->o->run;
    size_t n = j->c.n - from + 1;
    struct bt_store_event *ev = bt_xcalloc(n, sizeof *ev);
    char *warning = warning_json(j, kept + 1);
    ev[0] = (struct bt_store_event){.run = run->id,
                                    .seq = kept + 1,
                                    .type = bt_event_type_name(BT_EVENT_WARNING),
                                    .ts_ms = bt_now_ms(),
                                    .data = warning,
                                    .len = strlen(warning)};
    for (size_t i = 1; i < n; i++) {
        const struct replayed *r = &j->c.v[from + i - 1];
        ev[i] = (struct bt_store_event){.run = run->id,
                                        .seq = r->seq + j->c.shift,
                                        .type = r->type,
                                        .ts_ms = r->ts_ms,
                                        .data = r->json,
                                        .len = r->len};
    }
    const struct bt_turn_result *res = &j->res, *owner = j->o->end;
    /* the run's message says it too, so `baton show` tells what happened */
    char *note = bt_xasprintf("%s%sbaton's record of this turn was rebuilt from the coder's raw "
                              "output, because %s",
                              res->error_message ? res->error_message : "",
                              res->error_message ? "; " : "", why(j));
    struct bt_store_run_end e = {
        .state = state_of(res->status),
        .exit_code = res->exit_code,
        .exit_signal = res->exit_signal,
        .error_kind = bt_error_kind_name(res->error_kind),
        .error_text = note,
        .stderr_tail = owner ? owner->stderr_tail : NULL,
        .stderr_tail_len = owner && owner->stderr_tail ? strlen(owner->stderr_tail) : 0,
        .usage = &res->usage,
        .native_session_id = res->native_session_id,
        .final_text = res->final_text,
    };
    int rc = bt_store_run_rebuild(j->s, run->id, kept, ev, n, &e);
    free(note);
    free(warning);
    free(ev);
    if (rc)
        return rc;
    rep->rebuilt = 1;
    rep->kept = kept;
    rep->added = (int64_t)n;
    rep->state = e.state;
    /* a session named by the lost events: later turns resume it */
    const char *sid = res->native_session_id, *spath = res->native_session_path;
    int known = sid && j->conv.native_session_id && strcmp(sid, j->conv.native_session_id) == 0;
    if (sid && !known)
        bt_store_conversation_set_native(j->s, run->conversation, sid, spath);
    return 0;
}

/* Decide what to keep and store; 0 with nothing done when the store has
 * everything the stream gives. */
static int decide(struct job *j, struct bt_rebuild_report *rep)
{
    int rc = replay(j, 1);
    if (rc || j->c.n == 0)
        return rc;
    /* the stored body: a stored turn.completed (a crash before the run was
     * finished) is replaced by the replay's */
    int64_t body_s = j->st.n;
    if (body_s > 0 && strcmp(j->st.type[body_s - 1], "turn.completed") == 0)
        body_s--;
    size_t from = end_start(j);
    int64_t body_r = (int64_t)from;
    if (!j->o->always && (j->st.gap || (!j->res.coder_ended && body_r <= body_s)))
        return 0; /* a store we cannot line up, or nothing it lacks */
    int64_t kept;
    if (body_r >= body_s) { /* the replay from the first disagreement on */
        kept = agreeing(j, body_s);
        from = (size_t)kept;
    } else { /* the raw output is shorter: every stored event stays */
        kept = body_s;
        rc = replay(j, kept + 1 - (int64_t)from);
        if (rc)
            return rc;
    }
    return store(j, kept, from, rep);
}

int bt_rebuild_run(struct bt_store *s, const struct bt_rebuild *o, struct bt_rebuild_report *rep)
{
    memset(rep, 0, sizeof *rep);
    struct job j = {.s = s, .o = o, .raw = BT_BUF_INIT};
    bt_buf_init(&j.c.scratch);
    int rc = setup(&j, rep);
    if (rc == 0 && j.to.coder && j.raw_name && (!rep->problem || j.raw.len))
        rc = decide(&j, rep);
    collect_release(&j.c);
    stored_release(&j.st);
    bt_turn_result_release(&j.res);
    bt_buf_release(&j.raw);
    bt_store_conversation_release(&j.conv);
    free(j.raw_name);
    free(j.changes);
    return rc;
}
