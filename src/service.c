/* SPDX-License-Identifier: MIT */
/* service: the conversation service (see service.h). */
#include "service.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"
#include "error.h"
#include "perf.h"
#include "proc.h"
#include "rebuild.h"
#include "runfile.h"
#include "turn.h"

extern char **environ;

/* A coder resolved to an executable and version, or why not. */
struct located {
    const struct bt_coder *coder;
    struct bt_coder_exe exe; /* what runs */
    struct bt_store_exe id;  /* its identity, the key of its stored version */
    int have_id;             /* id could be read */
    int asked;               /* the coder was asked (now, or the store says so) */
    char *version;           /* NULL: not known before the coder says it */
};

/* Everything one turn needs while it runs. */
struct turn_ctx {
    struct bt_store *store;
    const struct bt_service_turn *t;
    const char *run;
    const char *conversation;
    const struct located *l; /* the coder run */
    int store_failed;        /* a write failed: no more events are stored; the run is
                                rebuilt from its raw output at its end */
    char *store_error;       /* the first failed write's message */
    int version_named;       /* the coder named its version */
    int rebuilt;             /* after a failed write: the run was rebuilt at its end */
};

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
    fprintf(stderr,
            "baton: could not store the run's events: %s; the turn goes on, and its events are "
            "rebuilt from the coder's raw output when it ends\n",
            c->store_error);
}

static void ctx_event(void *data, const struct bt_event *ev, const char *json, size_t len)
{
    struct turn_ctx *c = data;
    if (c->store_failed) { /* no hole in the stored events: see store_check */
        if (c->t->on_event)
            c->t->on_event(c->t->data, ev, json, len);
        return;
    }
    struct bt_store_event se = {.run = c->run,
                                .seq = ev->seq,
                                .type = bt_event_type_name(ev->type),
                                .ts_ms = ev->ts_ms,
                                .data = json,
                                .len = len};
    store_check(c, bt_store_event_append(c->store, &se));
    /* the native session is recorded at once, so a crash cannot lose it */
    if (ev->type == BT_EVENT_SESSION_STARTED && ev->native_session_id)
        store_check(c, bt_store_conversation_set_native(c->store, c->conversation,
                                                        ev->native_session_id,
                                                        ev->native_session_path));
    if (c->t->on_event)
        c->t->on_event(c->t->data, ev, json, len);
}

static void ctx_batch(void *data)
{
    struct turn_ctx *c = data;
    if (!c->store_failed)
        store_check(c, bt_store_flush(c->store));
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

/* The caller's tick (spinner, its own reasons to stop), and the cancel
 * request of `baton cancel` from any process. */
static int ctx_tick(void *data)
{
    struct turn_ctx *c = data;
    int requested = 0;
    if (c->t->on_tick && c->t->on_tick(c->t->data))
        return 1;
    bt_store_run_cancel_requested(c->store, c->run, &requested);
    return requested;
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
static int probe(struct bt_store *s, struct located *l)
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
static int find_version(struct bt_store *s, struct located *l)
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
static void late_probe(struct bt_store *s, struct located *l, const char *run, int named)
{
    if (named || l->version || l->asked || !l->coder->runner->reports_version)
        return;
    if (probe(s, l) == 0 && l->version)
        bt_store_run_set_version(s, run, l->version);
}

static int locate(struct bt_store *s, const char *name, struct located *l,
                  struct bt_service_outcome *out)
{
    l->coder = bt_coder_find(name);
    if (!l->coder) {
        out->exit_code = BT_EXIT_USAGE;
        out->message = bt_xasprintf("unknown coder '%s' (see `baton coders`)", name);
        return -EINVAL;
    }
    if (bt_coder_resolve(l->coder, &l->exe) != 0) {
        out->exit_code = BT_EXIT_NOT_INSTALLED;
        out->message = bt_coder_not_found(l->coder);
        return BT_ENOTINSTALLED;
    }
    if (find_version(s, l) == -EINTR) {
        out->exit_code = BT_EXIT_CANCELLED;
        out->message =
            bt_xasprintf("interrupted while asking %s for its version; nothing was sent", name);
        return -EINTR;
    }
    bt_perf_mark("coder located");
    return 0;
}

static void located_release(struct located *l)
{
    bt_coder_exe_release(&l->exe);
    free(l->version);
}

static int store_error(struct bt_store *s, struct bt_service_outcome *out, int rc)
{
    out->exit_code = BT_EXIT_FAILED;
    out->message = bt_xasprintf("store: %s", bt_store_errmsg(s));
    return rc;
}

/* Record the run's end as the turn gave it. */
static int record_end(struct turn_ctx *c, const struct bt_turn_result *res)
{
    struct bt_store_run_end e = {
        .state = run_state(res->status),
        .exit_code = res->exit_code,
        .exit_signal = res->exit_signal,
        .stop_stage = res->stop_stage,
        .error_kind = res->error_kind,
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
        rc = bt_rebuild_run(
            c->store,
            &(struct bt_rebuild){.run = &run, .turn = turn, .end = res, .why = why, .always = 1},
            &rep);
    if (rc == 0 && rep.rebuilt) {
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
                        const struct located *l, char **path, char **why)
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

static int check_cwd(const struct bt_store_conversation *conv, struct bt_service_outcome *out)
{
    struct stat st;
    if (stat(conv->cwd, &st) == 0 && S_ISDIR(st.st_mode))
        return 0;
    out->exit_code = BT_EXIT_FAILED;
    out->message =
        bt_xasprintf("the conversation's directory %s is gone; nothing was sent", conv->cwd);
    return -ENOENT;
}

/* Why bt_store_run_submit refused, for the user. */
static int submit_failed(struct bt_store *s, const struct bt_store_conversation *conv,
                         const struct bt_store_run_new *rn, int rc, struct bt_service_outcome *out)
{
    if (rc == BT_EBUSY) {
        out->exit_code = rn->after_run ? BT_EXIT_USAGE : BT_EXIT_FAILED;
        out->message = bt_xasprintf("conversation %s has a turn running", conv->id);
    } else if (rc == BT_ENOTFOUND && rn->take_queued && !rn->user_text) {
        out->exit_code = BT_EXIT_OK; /* nothing waits: nothing to do */
    } else if (rc == -EPERM) {
        out->exit_code = BT_EXIT_USAGE;
        out->message = bt_xasprintf("conversation %s was handed off to %s's terminal UI, which "
                                    "owns the session now (--force sends anyway)",
                                    conv->id, conv->coder);
    } else if (rc == BT_ETOOBIG) {
        out->exit_code = BT_EXIT_USAGE;
        out->message = bt_xasprintf("%s", bt_store_errmsg(s));
    } else {
        store_error(s, out, rc);
    }
    return rc;
}

/* baton's environment for the coder (with its launcher's changes), tagged
 * with the run (BT_PROC_RUN_TAG): recovery finds the run's processes by it. */
static void coder_env(const struct located *l, const char *run, struct bt_strv *env)
{
    char *tag = bt_xasprintf("%s=%s", BT_PROC_RUN_TAG, run);
    bt_coder_env(&l->exe, environ, tag, env);
    free(tag);
}

/* Run the turn of the run just created and record its end. */
static int run_engine(struct bt_store *s, const struct bt_store_conversation *conv,
                      struct located *l, const struct bt_service_turn *t, const char *prompt,
                      struct bt_service_outcome *out)
{
    char *session_path = NULL, *why = NULL;
    int rc = plan_session(s, conv, l, &session_path, &why);
    if (rc) {
        out->exit_code = BT_EXIT_FAILED;
        out->message = bt_xasprintf("cannot choose a session file for %s: %s", conv->coder,
                                    why ? why : bt_strerror(rc));
        free(why);
        bt_store_run_finish(s, out->run,
                            &(struct bt_store_run_end){.state = BT_STORE_RUN_FAILED,
                                                       .exit_code = BT_UNKNOWN,
                                                       .error_text = out->message});
        return rc;
    }
    struct turn_ctx c = {.store = s, .t = t, .run = out->run, .conversation = conv->id, .l = l};
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
                .no_retry = t->no_retry},
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
        .data = &c,
    };
    struct bt_turn_result res;
    rc = bt_turn_run(&o, &res);
    bt_strv_release(&env);
    bt_runfile_close(o.raw_out);
    bt_runfile_close(o.raw_err);
    free(session_path);
    if (rc) {
        out->exit_code = BT_EXIT_FAILED;
        out->message = bt_xasprintf("could not run the turn: %s", bt_strerror(rc));
        bt_store_run_finish(s, out->run,
                            &(struct bt_store_run_end){.state = BT_STORE_RUN_FAILED,
                                                       .exit_code = BT_UNKNOWN,
                                                       .error_kind = "coder_crashed",
                                                       .error_text = out->message});
        return rc;
    }
    if (!c.store_failed)
        finish_run(&c, &res);
    if (c.store_failed) /* during the turn, or its last events or end */
        rebuild_run(&c, &o, &res, out);
    free(c.store_error);
    bt_perf_mark("run recorded");
    late_probe(s, l, out->run, c.version_named);
    out->exit_code = bt_turn_exit_code(&res);
    out->completed = res.status == BT_TURN_COMPLETED;
    if (c.store_failed && !c.rebuilt && out->exit_code == BT_EXIT_OK)
        out->exit_code = BT_EXIT_FAILED;
    if (c.store_failed && !c.rebuilt)
        out->completed = 0;
    bt_turn_result_release(&res);
    return 0;
}

/* A turn's settings, kept with a queued message: they are the sender's,
 * not those of whichever process sends the queue later. */
static struct bt_store_settings sender_settings(const struct bt_service_turn *t)
{
    return (struct bt_store_settings){.approval = (int)t->approval,
                                      .timeout_ms = t->timeout_ms,
                                      .idle_timeout_ms = t->idle_timeout_ms,
                                      .no_retry = t->no_retry};
}

/* The shorter of two limits, 0 meaning none. */
static uint64_t shorter(uint64_t a, uint64_t b)
{
    return a == 0 ? b : b == 0 ? a : a < b ? a : b;
}

/* Narrow t by one queued message's settings: the least permissive
 * approval, the shorter limits, no retries if it asked for none. A message
 * without settings (stored by an older baton) reads as 0: the default
 * approval, deny. */
static void narrow(struct bt_service_turn *t, const struct bt_store_settings *q)
{
    if (q->approval >= 0 && q->approval < (int)t->approval)
        t->approval = (enum bt_approval)q->approval;
    t->timeout_ms = shorter(t->timeout_ms, q->timeout_ms);
    t->idle_timeout_ms = shorter(t->idle_timeout_ms, q->idle_timeout_ms);
    t->no_retry |= q->no_retry != 0;
}

/* The settings a run that took queued messages runs with: those of the
 * messages (and of t when it sends text of its own), narrowed together. */
static struct bt_service_turn turn_settings(const struct bt_service_turn *t, int own_text,
                                            const struct bt_store_submitted *queued)
{
    struct bt_service_turn eff = *t;
    if (!own_text && queued->n_settings > 0) { /* a flush: only the senders count */
        eff.approval = BT_APPROVAL_NEVER;
        eff.timeout_ms = eff.idle_timeout_ms = 0;
        eff.no_retry = 0;
    }
    for (size_t i = 0; i < queued->n_settings; i++)
        narrow(&eff, &queued->settings[i]);
    return eff;
}

/* Submit rn (start a run or queue its prompt) and, if a run started, run
 * its turn. */
static int do_turn(struct bt_store *s, const struct bt_store_conversation *conv, struct located *l,
                   const struct bt_service_turn *t, const struct bt_store_run_new *rn,
                   struct bt_service_outcome *out)
{
    int rc = check_cwd(conv, out);
    if (rc)
        return rc;
    struct bt_store_submitted sub;
    rc = bt_store_run_submit(s, rn, &sub);
    bt_perf_mark("prompt stored");
    out->busy = sub.busy;
    if (rc == 0 && sub.queued) {
        out->queued = sub.queued;
        out->queue_no = sub.queue_no;
        out->exit_code = BT_EXIT_OK;
    } else if (rc == 0) {
        struct bt_service_turn eff = turn_settings(t, rn->user_text != NULL, &sub);
        memcpy(out->run, sub.run, BT_ID_SIZE);
        if (t->on_run)
            t->on_run(t->data, conv->id, out->run);
        rc = run_engine(s, conv, l, &eff, sub.prompt, out);
        bt_store_queued_count(s, conv->id, &out->waiting);
    } else {
        submit_failed(s, conv, rn, rc, out);
    }
    bt_store_submitted_release(&sub);
    return rc;
}

/* Load conversation id and locate its coder. */
/* The conversation alone (no coder looked up yet). */
static int load_conversation(struct bt_store *s, const char *id, struct bt_store_conversation *conv,
                             struct located *l, struct bt_service_outcome *out)
{
    memset(out, 0, sizeof(*out));
    memset(l, 0, sizeof(*l));
    int rc = bt_store_conversation_get(s, id, conv);
    if (rc) {
        out->exit_code = BT_EXIT_USAGE;
        out->message = bt_xasprintf("no conversation %s", id);
        return rc;
    }
    memcpy(out->conversation, conv->id, BT_ID_SIZE);
    return 0;
}

static int load(struct bt_store *s, const char *id, struct bt_store_conversation *conv,
                struct located *l, struct bt_service_outcome *out)
{
    int rc = load_conversation(s, id, conv, l, out);
    return rc ? rc : locate(s, conv->coder, l, out);
}

int bt_service_run(struct bt_store *s, const struct bt_service_turn *t,
                   struct bt_service_outcome *out)
{
    struct located l = {0};
    memset(out, 0, sizeof(*out));
    int rc = locate(s, t->coder, &l, out);
    if (rc == 0) {
        struct bt_store_conversation_new cn = {
            .coder = t->coder, .model = t->model, .cwd = t->cwd, .title = t->prompt};
        rc = bt_store_conversation_create(s, &cn, out->conversation);
        if (rc) {
            store_error(s, out, rc);
        } else {
            struct bt_store_conversation conv;
            rc = bt_store_conversation_get(s, out->conversation, &conv);
            struct bt_store_run_new rn = {.conversation = conv.id,
                                          .coder = conv.coder,
                                          .model = conv.model,
                                          .user_text = t->prompt,
                                          .queue = t->queue,
                                          .max_prompt = BT_SERVICE_PROMPT_MAX};
            struct bt_store_settings settings = sender_settings(t);
            rn.settings = &settings;
            rc = rc ? store_error(s, out, rc) : do_turn(s, &conv, &l, t, &rn, out);
            bt_store_conversation_release(&conv);
        }
    }
    located_release(&l);
    return rc;
}

/* The next turn of conversation id with text (NULL: only what is queued),
 * after what is queued. */
static int next_turn(struct bt_store *s, const char *id, const struct bt_service_turn *t,
                     const char *text, struct bt_service_outcome *out)
{
    struct located l;
    struct bt_store_conversation conv;
    int rc = load(s, id, &conv, &l, out);
    if (rc == 0) {
        struct bt_store_run_new rn = {.conversation = conv.id,
                                      .coder = conv.coder,
                                      .model = conv.model,
                                      .user_text = text,
                                      .take_queued = 1,
                                      .queue = text ? t->queue : BT_STORE_QUEUE_NEVER,
                                      .max_prompt = BT_SERVICE_PROMPT_MAX,
                                      .force = t->force};
        struct bt_store_settings settings = sender_settings(t);
        rn.settings = &settings;
        rc = do_turn(s, &conv, &l, t, &rn, out);
    }
    located_release(&l);
    bt_store_conversation_release(&conv);
    return rc;
}

int bt_service_send(struct bt_store *s, const char *id, const struct bt_service_turn *t,
                    struct bt_service_outcome *out)
{
    return next_turn(s, id, t, t->prompt, out);
}

int bt_service_flush(struct bt_store *s, const char *id, const struct bt_service_turn *t,
                     struct bt_service_outcome *out)
{
    int rc = next_turn(s, id, t, NULL, out);
    if (rc == BT_EBUSY) { /* the running turn's owner takes the queue */
        free(out->message);
        out->message = NULL;
        out->exit_code = BT_EXIT_OK;
        rc = BT_ENOTFOUND;
    }
    return rc;
}

/* The prompt of run r: stored with it, or (a run of schema 1) the text of
 * the user messages it answered. Caller frees. */
static char *prompt_of(struct bt_store *s, const struct bt_store_run *r)
{
    if (r->prompt)
        return bt_xstrdup(r->prompt);
    struct bt_store_message *m = NULL;
    size_t n = 0;
    struct bt_buf b = BT_BUF_INIT;
    bt_store_message_list(s, r->conversation, &m, &n);
    for (size_t i = 0; i < n; i++) {
        if (m[i].role != BT_STORE_ROLE_USER || strcmp(m[i].run, r->id) != 0)
            continue;
        if (b.len)
            bt_buf_adds(&b, BT_STORE_QUEUE_JOIN);
        bt_buf_adds(&b, m[i].text);
    }
    bt_store_message_list_free(m, n);
    return b.len ? bt_buf_detach(&b, NULL) : (bt_buf_release(&b), NULL);
}

/* 0 if the last run r may be retried, else why not (out set). */
static int check_retry(const struct bt_store_run *r, struct bt_service_outcome *out)
{
    out->exit_code = BT_EXIT_USAGE;
    switch (r->state) {
    case BT_STORE_RUN_RUNNING:
        out->message = bt_xasprintf("the last turn of %s is still running", r->conversation);
        return BT_EBUSY;
    case BT_STORE_RUN_COMPLETED:
        out->message = bt_xasprintf("the last turn of %s completed: a completed turn is never "
                                    "sent again (use `baton send`)",
                                    r->conversation);
        return -EALREADY;
    default: out->exit_code = BT_EXIT_OK; return 0;
    }
}

int bt_service_retry(struct bt_store *s, const char *id, const struct bt_service_turn *t,
                     struct bt_service_outcome *out)
{
    struct located l;
    struct bt_store_conversation conv;
    struct bt_store_run last = {0};
    char *prompt = NULL;
    /* what the conversation's state refuses comes before the coder's
     * installation: nothing to retry is exit 2 wherever baton runs */
    int rc = load_conversation(s, id, &conv, &l, out);
    if (rc == 0 && (rc = bt_store_run_last(s, conv.id, &last)) != 0) {
        out->exit_code = BT_EXIT_USAGE;
        out->message = bt_xasprintf("conversation %s has no turn to retry", conv.id);
    }
    if (rc == 0)
        rc = check_retry(&last, out);
    if (rc == 0 && !(prompt = prompt_of(s, &last))) {
        rc = BT_ENOTFOUND;
        out->exit_code = BT_EXIT_FAILED;
        out->message = bt_xasprintf("the prompt of the last turn of %s is not stored", conv.id);
    }
    if (rc == 0)
        rc = locate(s, conv.coder, &l, out);
    if (rc == 0) {
        struct bt_store_run_new rn = {.conversation = conv.id,
                                      .coder = conv.coder,
                                      .model = conv.model,
                                      .turn = last.turn, /* another run of that turn */
                                      .prompt = prompt,
                                      .after_run = last.id,
                                      .force = t->force};
        rc = do_turn(s, &conv, &l, t, &rn, out);
    }
    free(prompt);
    bt_store_run_release(&last);
    located_release(&l);
    bt_store_conversation_release(&conv);
    return rc;
}
