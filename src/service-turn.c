/* SPDX-License-Identifier: MIT */
/*
 * service-turn: one turn of the conversation service (see service.h and
 * service-int.h): the coder located and its version known, the run's raw
 * output kept, the turn engine run with every event stored as it arrives,
 * and its end recorded, or the run rebuilt from its raw output when the
 * store failed meanwhile.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "channel.h"
#include "error.h"
#include "json.h"
#include "perf.h"
#include "proc.h"
#include "rebuild.h"
#include "repo.h"
#include "runfile.h"
#include "service-int.h"
#include "turn.h"

extern char **environ;

/* Everything one turn needs while it runs. */
struct turn_ctx {
    struct bt_store *store;
    const struct bt_service_turn *t;
    const char *run;
    const char *conversation;
    const struct bt_service_coder *l;  /* the coder run */
    int store_failed;                  /* a write failed: no more events are stored; the run is
                                          rebuilt from its raw output at its end */
    char *store_error;                 /* the first failed write's message */
    int version_named;                 /* the coder named its version */
    int rebuilt;                       /* after a failed write: the run was rebuilt at its end */
    int raw_error;                     /* the raw copy's first failed write (-errno), or 0 */
    const char *cwd;                   /* the turn's directory */
    char tree_start[BT_REPO_OID_SIZE]; /* its git working tree before the turn; "" none */
    char *changes;                     /* what turn.completed said changed, for a rebuild */
    char *unknown;                     /* why the changes cannot be known (untracked files
                                          over their bounds), or NULL */
    struct bt_turn *turn;              /* the live turn, between on_loop and on_loop_end */
    int64_t control_last;              /* the last control request delivered (its id) */
    struct bt_channel *channel;        /* the owner's channel (channel.h), or NULL */
    struct bt_buf pending;             /* event lines not yet committed, then sent to the
                                          followers and given to the caller (commit) */
    struct bt_buf rowids;              /* int64_t per line of pending: its store rowid, 0 if
                                          not stored (for followers' commit order) */
    int committing;                    /* in commit: one that the caller's on_event
                                          causes waits for it, to keep the order */
    unsigned ticks;                    /* on_tick calls, for the fallback read */
};

/* The fallback read of control requests, every this many ticks (1 s): a
 * request whose wake did not come through (the channel could not be
 * made, the requester died between storing and waking) waits no longer. */
#define CONTROL_FALLBACK_TICKS 10

/* Report the first failed write. The turn goes on (the coder's work is not
 * thrown away: its raw output keeps all of it), and no event is stored
 * after it, so the store holds events 1..k with no hole, from which the
 * run is rebuilt (rebuild.h) at the end of the turn, or by whoever finds
 * the run later if the store cannot be written then either. */
static void store_check(struct turn_ctx *c, int rc)
{
    if (rc == 0 || c->store_failed)
        return;
    c->store_failed = 1;
    c->store_error = bt_xstrdup(bt_store_errmsg(c->store));
    /* a batch left open (an append refused) would keep the write lock */
    bt_store_flush(c->store);
    fprintf(stderr,
            "baton: could not store the run's events: %s; the turn goes on, and its events are "
            "rebuilt from the coder's raw output when it ends\n",
            c->store_error);
}

/* Snapshots are off for this turn: --no-snapshot, or BATON_SNAPSHOTS set
 * to 0, no, off or false (there is no configuration file yet). */
static int snapshots_off(const struct bt_service_turn *t)
{
    const char *v = getenv("BATON_SNAPSHOTS");
    return t->no_snapshot || (v && (strcmp(v, "0") == 0 || strcmp(v, "no") == 0 ||
                                    strcmp(v, "off") == 0 || strcmp(v, "false") == 0));
}

/* A snapshot of the turn's working tree (src/repo.h) kept by the
 * reference refs/baton/<conversation>/<run>/<which> of baton's store in
 * $BATON_HOME/snapshots. A directory outside git, or in a bare
 * repository, has none, and that is not worth a word; untracked files
 * over their bounds, or any other failure, make the changes unknown
 * (c->unknown says why; a failure is said on stderr too): the turn goes
 * on. */
static int snapshot(struct turn_ctx *c, const char *which, char oid[BT_REPO_OID_SIZE])
{
    char *ref = bt_xasprintf("refs/baton/%s/%s/%s", c->conversation, c->run, which);
    char *snapshots = bt_xasprintf("%s/snapshots", bt_store_home(c->store)), *why = NULL;
    int rc = bt_repo_snapshot(c->cwd, snapshots, ref, oid, &why);
    if (rc && rc != BT_ENOTFOUND && rc != -EINVAL && rc != -EFBIG)
        fprintf(stderr, "baton: the turn's changes are not recorded: %s\n", why);
    if (rc && rc != BT_ENOTFOUND && rc != -EINVAL && !c->unknown) {
        c->unknown = why; /* the event says why, not only this stderr (a worker's) */
        why = NULL;
    }
    free(why);
    free(snapshots);
    free(ref);
    return rc;
}

static void snapshot_start(struct turn_ctx *c)
{
    c->tree_start[0] = '\0';
    if (snapshots_off(c->t))
        return;
    if (snapshot(c, "start", c->tree_start) == 0)
        store_check(c, bt_store_run_set_trees(c->store, c->run, c->tree_start, NULL));
    else
        c->tree_start[0] = '\0';
    bt_perf_mark("working tree before");
}

/* turn.completed's changes when they cannot be known:
 * {"unknown": true, "reason": "..."} (docs/events.md). */
static char *unknown_json(const char *reason)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "unknown", 1);
    cJSON_AddStringToObject(o, "reason", reason);
    char *text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return text;
}

/* turn.completed's changes: the working tree now against before. */
static char *ctx_end(void *data)
{
    struct turn_ctx *c = data;
    if (!c->tree_start[0] && !c->unknown)
        return NULL;
    char end[BT_REPO_OID_SIZE], *why = NULL, *json = NULL;
    if (c->tree_start[0] && snapshot(c, "end", end) == 0) {
        store_check(c, bt_store_run_set_trees(c->store, c->run, NULL, end));
        char *snapshots = bt_xasprintf("%s/snapshots", bt_store_home(c->store));
        json = bt_repo_changes_summary(c->cwd, snapshots, c->tree_start, end, &why);
        free(snapshots);
        if (!json)
            fprintf(stderr, "baton: the turn's changes are not recorded: %s\n", why);
        if (!json && !c->unknown) {
            c->unknown = why;
            why = NULL;
        }
    }
    if (!json && c->unknown)
        json = unknown_json(c->unknown);
    free(why);
    c->changes = json ? bt_xstrdup(json) : NULL;
    bt_perf_mark("working tree after");
    return json;
}

/* Give the caller (its on_event) the event lines of buf, in order. */
static void give_caller(struct turn_ctx *c, const struct bt_buf *buf)
{
    for (size_t off = 0, n; off < buf->len; off += n) {
        const char *line = buf->data + off;
        const char *nl = memchr(line, '\n', buf->len - off);
        n = nl ? (size_t)(nl - line) + 1 : buf->len - off;
        struct bt_event ev;
        struct bt_event_doc *doc = NULL;
        /* the line is bt_event_to_json's: it reads back whole (event.h),
         * but for memory; the store keeps it whatever happens here */
        int rc = bt_event_parse(line, n, &ev, &doc);
        if (rc == 0)
            c->t->on_event(c->t->data, &ev, line, n);
        else
            fprintf(stderr,
                    "baton: an event of run %s could not be read back (%s); `baton show` "
                    "has it\n",
                    c->run, bt_strerror(rc));
        bt_event_doc_free(doc);
    }
}

/* Commit what is stored, then send it to the followers and give it to the
 * caller: a follower that reads the store then finds it, and the caller
 * (stdout into a pipe nobody reads, a terminal stopped by Ctrl-S, an
 * editor slow to read `baton acp`) may block, which it must not do while
 * the batch holds the store's write lock: every other run writing to the
 * store would wait, then fail (ten `baton run --json` at once, their
 * stdout read one after the other: all ten lost batches after 5 s). With the store
 * failed, the lines go to the caller at once, and to no follower (they
 * read the run rebuilt). */
static void commit(struct turn_ctx *c)
{
    if (c->committing) /* the outer commit goes on with what was added */
        return;
    c->committing = 1;
    do {
        if (!c->store_failed)
            store_check(c, bt_store_flush(c->store));
        struct bt_buf lines = c->pending, rowids = c->rowids; /* on_event may add */
        c->pending = c->rowids = (struct bt_buf)BT_BUF_INIT;
        if (!c->store_failed)
            bt_channel_publish(c->channel, lines.data, lines.len, (const int64_t *)rowids.data,
                               rowids.len / sizeof(int64_t));
        if (c->t->on_event)
            give_caller(c, &lines);
        bt_buf_release(&lines);
        bt_buf_release(&rowids);
    } while (c->pending.len);
    c->committing = 0;
}

/* The line for the followers and the caller once committed, with its rowid. */
static void pend(struct turn_ctx *c, const char *json, size_t len, int64_t rowid)
{
    if (!c->channel && !c->t->on_event)
        return;
    bt_buf_add(&c->pending, json, len);
    bt_buf_add(&c->rowids, &rowid, sizeof rowid);
}

static void ctx_event(void *data, const struct bt_event *ev, const char *json, size_t len)
{
    struct turn_ctx *c = data;
    if (c->store_failed) { /* no hole in the stored events: see store_check */
        pend(c, json, len, 0);
        commit(c);
        return;
    }
    struct bt_store_event se = {.run = c->run,
                                .seq = ev->seq,
                                .type = bt_event_type_name(ev->type),
                                .ts_ms = ev->ts_ms,
                                .data = json,
                                .len = len};
    store_check(c, bt_store_event_append(c->store, &se));
    pend(c, json, len, bt_store_event_appended(c->store));
    /* the native session is recorded at once, so a crash cannot lose it */
    if (ev->type == BT_EVENT_SESSION_STARTED && ev->native_session_id)
        store_check(c, bt_store_conversation_set_native(c->store, c->conversation,
                                                        ev->native_session_id,
                                                        ev->native_session_path));
    /* a request kept for a person is committed before anyone hears of it:
     * whoever it tells (`baton acp`'s editor) may answer at once, and
     * bt_service_decide finds what waits in the store through another
     * connection; uncommitted, the answer was refused as not waiting and
     * the turn waited for the idle limit */
    if (ev->type == BT_EVENT_APPROVAL_REQUESTED || c->store_failed)
        commit(c);
}

static void ctx_batch(void *data)
{
    commit(data);
}

static void ctx_spawn(void *data, int pid)
{
    struct turn_ctx *c = data;
    store_check(c, bt_store_run_started(c->store, c->run, pid, pid, c->l->version));
    store_check(c, bt_store_flush(c->store));
}

/* The coder named its version: it is the run's, and the stored one for
 * this executable from now on. Failing to store it costs a later turn a
 * probe at most, so it is not a store failure of the run. */
static void ctx_version(void *data, const char *version)
{
    struct turn_ctx *c = data;
    c->version_named = 1;
    store_check(c, bt_store_run_set_version(c->store, c->run, version));
    if (c->l->have_id && !(c->l->version && strcmp(c->l->version, version) == 0))
        bt_store_coder_version_put(c->store, &c->l->id, version);
}

/* The control requests stored for this run by any process (`baton
 * cancel`, the API...), delivered to the live turn (service-control.c). */
static void ctx_controls(struct turn_ctx *c)
{
    if (c->turn)
        bt_service_control_deliver(c->store, c->turn, c->run, &c->control_last);
}

/* The caller's tick (spinner, its own reasons to stop), and the fallback
 * read of control requests (they come through the channel's wake). */
static int ctx_tick(void *data)
{
    struct turn_ctx *c = data;
    if (c->t->on_tick && c->t->on_tick(c->t->data))
        return 1;
    if (++c->ticks % CONTROL_FALLBACK_TICKS == 0 || !c->channel)
        ctx_controls(c);
    return 0;
}

/* A requester stored a control request and woke us. */
static void ctx_wake(void *data)
{
    ctx_controls(data);
}

/* The turn's loop runs: the channel opens on it, then the requests stored
 * before are delivered (a request stored meanwhile wakes the channel). A
 * channel that cannot be made costs promptness only: requests are read on
 * the fallback tick, followers read the store. */
static void ctx_loop(void *data, struct bt_turn *t)
{
    struct turn_ctx *c = data;
    c->turn = t;
    int rc =
        bt_channel_open(bt_turn_loop(t), bt_store_home(c->store), c->run, ctx_wake, c, &c->channel);
    if (rc)
        fprintf(stderr,
                "baton: cannot listen on %s/%s for the run's control requests and followers: %s; "
                "they are read from the store\n",
                bt_store_home(c->store), BT_CHANNEL_DIR, bt_strerror(rc));
    ctx_controls(c);
}

/* What became of a steer the turn wrote (its control's id is the key). */
static void ctx_steer(void *data, int64_t key, int taken, const char *why)
{
    struct turn_ctx *c = data;
    bt_service_steer_outcome(c->store, key, taken, why);
}

/* The coder is gone: the channel closes (its followers read the rest,
 * turn.completed, from the store once the run's end is recorded). */
static void ctx_loop_end(void *data, struct bt_turn *t)
{
    struct turn_ctx *c = data;
    (void)t;
    ctx_controls(c); /* what came last is answered, not left for the strand */
    commit(c);
    bt_channel_close(c->channel);
    c->channel = NULL;
    c->turn = NULL;
}

/* The run file runs/<run><suffix>.zst, or NULL: a run without its raw copy
 * still runs (the events are in the store). */
static struct bt_runfile *open_run_file(struct bt_store *s, const char *run, const char *suffix,
                                        uint64_t max)
{
    char *name = bt_xasprintf("%s%s", suffix, BT_RUNFILE_SUFFIX);
    char *path = bt_store_run_file(s, run, name);
    struct bt_runfile *f = NULL;
    int rc = path ? bt_runfile_create(path, max, &f) : -EINVAL;
    if (rc) /* the run could not be rebuilt from it should the store fail */
        fprintf(stderr, "baton: the coder's raw output cannot be kept in %s: %s\n",
                path ? path : run, bt_strerror(rc));
    free(path);
    free(name);
    return f;
}

static enum bt_store_run_state run_state(enum bt_turn_status st)
{
    switch (st) {
    case BT_TURN_COMPLETED: return BT_STORE_RUN_COMPLETED;
    case BT_TURN_CANCELLED: return BT_STORE_RUN_CANCELLED;
    case BT_TURN_INTERRUPTED: return BT_STORE_RUN_INTERRUPTED;
    case BT_TURN_FAILED: break;
    }
    return BT_STORE_RUN_FAILED;
}

/* Ask the coder its version (`--version`) and store the answer for this
 * executable, no answer included (garbage, silence or a hang: asked again
 * only when the file changes). Returns bt_coder_version's result. */
static int probe(struct bt_store *s, struct bt_service_coder *l)
{
    free(l->version);
    l->version = NULL;
    l->asked = 1;
    int rc = bt_coder_version(l->coder, l->exe.path, &l->version);
    if ((rc == 0 || rc == BT_EPROTO) && l->have_id)
        bt_store_coder_version_put(s, &l->id, l->version);
    return rc;
}

/* The coder's version without starting it when that can be helped: the
 * one stored for this very executable, else nothing for a coder that names
 * its version in its protocol (the turn stores it then), else one probe,
 * stored for next time. A store that cannot keep it costs a probe a turn,
 * nothing more. -EINTR when a signal ended the probe. */
static int find_version(struct bt_store *s, struct bt_service_coder *l)
{
    l->have_id = bt_store_exe_stat(l->coder->name, l->exe.path, &l->id) == 0;
    if (l->have_id && bt_store_coder_version_get(s, &l->id, &l->version) == 0) {
        l->asked = !l->version; /* a stored "no answer" */
        return 0;
    }
    if (l->coder->runner->reports_version)
        return 0;
    return probe(s, l) == -EINTR ? -EINTR : 0;
}

/* A coder that should have named its version and did not (a release that
 * no longer does, a run that failed first) is asked once its run is
 * recorded, and the answer stored, so the next turns start no probe. */
static void late_probe(struct bt_store *s, struct bt_service_coder *l, const char *run, int named)
{
    if (named || l->version || l->asked || !l->coder->runner->reports_version)
        return;
    if (probe(s, l) == 0 && l->version)
        bt_store_run_set_version(s, run, l->version);
}

int bt_service_coder_locate(struct bt_store *s, const char *name, struct bt_service_coder *l,
                            struct bt_service_outcome *out)
{
    l->coder = bt_coder_find(name);
    if (!l->coder) {
        out->result = BT_SERVICE_USAGE;
        out->message = bt_xasprintf("unknown coder '%s' (see `baton coders`)", name);
        return -EINVAL;
    }
    if (bt_coder_resolve(l->coder, &l->exe) != 0) {
        out->result = BT_SERVICE_NOT_INSTALLED;
        out->message = bt_coder_not_installed(l->coder);
        return BT_ENOTINSTALLED;
    }
    if (find_version(s, l) == -EINTR) {
        out->result = BT_SERVICE_CANCELLED;
        out->message =
            bt_xasprintf("interrupted while asking %s for its version; nothing was sent", name);
        return -EINTR;
    }
    bt_perf_mark("coder located");
    return 0;
}

void bt_service_coder_release(struct bt_service_coder *l)
{
    bt_coder_exe_release(&l->exe);
    free(l->version);
}

/* Record the run's end as the turn gave it. */
static int record_end(struct turn_ctx *c, const struct bt_turn_result *res)
{
    struct bt_store_run_end e = {
        .state = run_state(res->status),
        .exit_code = res->exit_code,
        .exit_signal = res->exit_signal,
        .stop_stage = res->stop_stage,
        .error_kind = bt_error_kind_name(res->error_kind),
        .error_text = res->error_message,
        .stderr_tail = res->stderr_tail,
        .stderr_tail_len = res->stderr_tail ? strlen(res->stderr_tail) : 0,
        .usage = &res->usage,
        .native_session_id = res->native_session_id,
        .final_text = res->final_text,
    };
    return bt_store_run_finish(c->store, c->run, &e);
}

/* Commit the last events, then record the end; a failure of either leaves
 * the run running for rebuild_run (a finished run lacking its last events
 * could not be rebuilt). */
static void finish_run(struct turn_ctx *c, const struct bt_turn_result *res)
{
    store_check(c, bt_store_flush(c->store));
    if (!c->store_failed)
        store_check(c, record_end(c, res));
}

/* The end of a turn whose events could not all be stored: rebuild the run
 * from its raw output with this turn's settings and end. If the store can
 * still not be written, the run stays running with its owner (this
 * process) about to exit: the next baton command to open the store
 * rebuilds it (bt_cmd_recover). */
static void rebuild_run(struct turn_ctx *c, const struct bt_turn_options *turn,
                        const struct bt_turn_result *res, struct bt_service_outcome *out)
{
    struct bt_store_run run = {0};
    struct bt_rebuild_report rep = {0};
    char *why = bt_xasprintf("the store could not be written: %s", c->store_error);
    int rc = bt_store_run_get(c->store, c->run, &run);
    if (rc == 0)
        rc = bt_rebuild_run(c->store,
                            &(struct bt_rebuild){.run = &run,
                                                 .turn = turn,
                                                 .end = res,
                                                 .why = why,
                                                 .always = 1,
                                                 .changes_json = c->changes},
                            &rep);
    if (rc == 0 && rep.rebuilt && c->raw_error) {
        /* the raw copy stopped at a failed write (the disk full that failed
         * the store too): what came after it is in no record */
        out->message = bt_xasprintf(
            "the turn ended, but its record in %s is incomplete: the run was rebuilt from its raw "
            "output, which could not be kept whole either (%s)",
            bt_store_home(c->store), bt_strerror(c->raw_error));
    } else if (rc == 0 && rep.rebuilt) {
        c->rebuilt = 1;
        fprintf(stderr,
                "baton: the run's events were rebuilt from the coder's raw output "
                "(%lld kept, %lld added)\n",
                (long long)rep.kept, (long long)rep.added);
    } else if (rc == 0) { /* the raw output is no use: the record stays incomplete */
        record_end(c, res);
        out->message = bt_xasprintf("the turn ended, but its record in %s is incomplete: %s",
                                    bt_store_home(c->store),
                                    rep.problem ? rep.problem : "its raw output adds nothing");
    } else {
        out->message = bt_xasprintf(
            "the turn ended, but the store cannot be written (%s); the coder's output is kept in "
            "runs/%s.out%s, and the run is rebuilt from it by the next baton command that can "
            "write the store",
            bt_store_errmsg(c->store), c->run, BT_RUNFILE_SUFFIX);
    }
    free(why);
    bt_rebuild_report_release(&rep);
    bt_store_run_release(&run);
}

/* A coder whose native session is a file gets its path chosen by baton on
 * the first turn (where the coder's own terminal UI finds it), stored
 * before the coder starts. Called once the run exists, so no other process
 * runs a turn of this conversation meanwhile. *path stays NULL for other
 * coders and later turns. */
static int plan_session(struct bt_store *s, const struct bt_store_conversation *conv,
                        const struct bt_service_coder *l, char **path, char **why)
{
    *path = NULL;
    *why = NULL;
    if (conv->native_session_path || !l->coder->runner->new_session_path)
        return 0;
    struct bt_runner_config cfg = {.cwd = conv->cwd, .model = conv->model};
    int rc = l->coder->runner->new_session_path(&cfg, path, why);
    if (rc == 0)
        rc = bt_store_conversation_set_native(s, conv->id, NULL, *path);
    return rc;
}

/* baton's environment for the coder (with its launcher's changes), tagged
 * with the run (BT_PROC_RUN_TAG): recovery finds the run's processes by it. */
static void coder_env(const struct bt_service_coder *l, const char *run, struct bt_strv *env)
{
    char *tag = bt_xasprintf("%s=%s", BT_PROC_RUN_TAG, run);
    bt_coder_env(&l->exe, environ, tag, env);
    free(tag);
}

int bt_service_turn_run(struct bt_store *s, const struct bt_store_conversation *conv,
                        struct bt_service_coder *l, const struct bt_service_turn *t,
                        const char *prompt, struct bt_service_outcome *out)
{
    char *session_path = NULL, *why = NULL;
    int rc = plan_session(s, conv, l, &session_path, &why);
    if (rc) {
        out->result = BT_SERVICE_FAILED;
        out->message = bt_xasprintf("cannot choose a session file for %s: %s", conv->coder,
                                    why ? why : bt_strerror(rc));
        free(why);
        bt_store_run_finish(s, out->run,
                            &(struct bt_store_run_end){.state = BT_STORE_RUN_FAILED,
                                                       .exit_code = BT_UNKNOWN,
                                                       .error_text = out->message});
        return rc;
    }
    struct turn_ctx c = {.store = s,
                         .t = t,
                         .run = out->run,
                         .conversation = conv->id,
                         .l = l,
                         .cwd = conv->cwd,
                         .pending = BT_BUF_INIT,
                         .rowids = BT_BUF_INIT};
    snapshot_start(&c);
    struct bt_strv env;
    coder_env(l, out->run, &env);
    struct bt_turn_options o = {
        .coder = l->coder,
        .bin = l->exe.path,
        .coder_version = l->version,
        .env = env.v,
        .cfg = {.prompt = prompt,
                .model = conv->model,
                .cwd = conv->cwd,
                .approval = t->approval,
                .native_session_id = conv->native_session_id,
                .native_session_path = session_path ? session_path : conv->native_session_path,
                .no_retry = t->no_retry,
                .ask_fallback = t->ask_fallback,
                .ask_no_questions = t->ask_no_questions},
        .run_id = out->run,
        .conversation_id = conv->id,
        .raw_out = open_run_file(s, out->run, ".out", BT_TURN_RAW_OUT_MAX),
        .raw_err = open_run_file(s, out->run, ".err", BT_TURN_RAW_ERR_MAX),
        .timeout_ms = t->timeout_ms,
        .idle_timeout_ms = t->idle_timeout_ms,
        .on_event = ctx_event,
        .on_batch = ctx_batch,
        .on_spawn = ctx_spawn,
        .on_version = ctx_version,
        .on_tick = ctx_tick,
        .tick_ms = 100,
        .on_loop = ctx_loop,
        .on_loop_end = ctx_loop_end,
        .on_steer = ctx_steer,
        .on_end = ctx_end,
        .data = &c,
    };
    struct bt_turn_result res;
    rc = bt_turn_run(&o, &res);
    bt_strv_release(&env);
    c.raw_error = bt_runfile_close(o.raw_out);
    bt_runfile_close(o.raw_err);
    free(session_path);
    if (rc) {
        out->result = BT_SERVICE_FAILED;
        out->message = bt_xasprintf("could not run the turn: %s", bt_strerror(rc));
        bt_store_run_finish(s, out->run,
                            &(struct bt_store_run_end){
                                .state = BT_STORE_RUN_FAILED,
                                .exit_code = BT_UNKNOWN,
                                .error_kind = bt_error_kind_name(BT_ERROR_KIND_CODER_CRASHED),
                                .error_text = out->message});
        free(c.changes);
        free(c.unknown);
        bt_buf_release(&c.pending);
        bt_buf_release(&c.rowids);
        return rc;
    }
    if (!c.store_failed)
        finish_run(&c, &res);
    if (c.store_failed) /* during the turn, or its last events or end */
        rebuild_run(&c, &o, &res, out);
    commit(&c); /* the caller's last events (turn.completed), its end recorded */
    free(c.store_error);
    free(c.changes);
    free(c.unknown);
    bt_buf_release(&c.pending);
    bt_buf_release(&c.rowids);
    bt_service_control_strand(s); /* what came too late for the turn */
    bt_perf_mark("run recorded");
    late_probe(s, l, out->run, c.version_named);
    out->result = BT_SERVICE_TURN;
    out->status = res.status;
    out->error_kind = res.error_kind;
    out->completed = res.status == BT_TURN_COMPLETED;
    if (c.store_failed && !c.rebuilt && out->completed) /* its record is incomplete */
        out->result = BT_SERVICE_FAILED;
    if (c.store_failed && !c.rebuilt)
        out->completed = 0;
    bt_turn_result_release(&res);
    return 0;
}
