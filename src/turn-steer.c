/* SPDX-License-Identifier: MIT */
/*
 * turn-steer: text a person puts into the running turn (turn.h
 * bt_turn_steer). The runner writes it on the coder's own protocol; the
 * coder then takes it in (codex's turn/steer answer, pi's message_end of
 * role user, claude at once) or refuses it. Every steer written is
 * reported to on_steer exactly once: taken (turn.steered is emitted, so
 * it is part of the turn's transcript) or not, at the latest when the turn
 * ends, so the caller can queue it as the next turn's message: it is
 * never lost, and never both taken and queued.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "turn-int.h"

static void steered(struct bt_turn *t, struct bt_turn_steer_rec *s, int taken, const char *why)
{
    if (s->confirmed)
        return;
    s->confirmed = 1;
    if (taken) {
        struct bt_event ev;
        bt_event_init(&ev, BT_EVENT_TURN_STEERED);
        ev.steer_text = s->text;
        ev.control = s->key;
        bt_turn_emit(t, &ev);
    }
    if (t->o->on_steer)
        t->o->on_steer(t->o->data, s->key, taken, why);
}

static struct bt_turn_steer_rec *record(struct bt_turn *t, int64_t key, const char *text)
{
    if (t->steers.n == t->steers.cap) {
        t->steers.cap = t->steers.cap ? 2 * t->steers.cap : 4;
        t->steers.v = bt_xrealloc(t->steers.v, t->steers.cap * sizeof(*t->steers.v));
    }
    struct bt_turn_steer_rec *s = &t->steers.v[t->steers.n++];
    *s = (struct bt_turn_steer_rec){.key = key, .text = bt_xstrdup(text)};
    return s;
}

/* 1 if the turn can take no steer: its end came or is pending (a retry
 * may follow, or the coder drains: the coder may never read the text),
 * or it is being stopped. */
static int closed(const struct bt_turn *t)
{
    return !t->proc || t->done || t->ended || t->stop != BT_TURN_STOP_NONE || t->pending.set ||
           t->write_error;
}

/* Write steer s through the runner: 0 written (or taken), -EBUSY not yet,
 * another negative code when the turn cannot take it. */
static int write_steer(struct bt_turn *t, struct bt_turn_steer_rec *s)
{
    int rc = t->o->coder->runner->steer(t->runner, s->key, s->text, &t->wbuf, &t->sink);
    if (rc < 0) {
        bt_buf_reset(&t->wbuf);
        return rc;
    }
    s->deferred = 0;
    bt_turn_flush(t);
    if (rc == BT_RUNNER_STEER_TAKEN_END) {
        t->steers.ends_owed++;
        steered(t, s, 1, NULL);
    }
    return 0;
}

int bt_turn_steer(struct bt_turn *t, int64_t key, const char *text)
{
    if (!t->o->coder->runner->steer)
        return -ENOTSUP;
    if (closed(t))
        return -EAGAIN;
    /* after one deferred, every later one waits too: they go in order */
    int waiting = t->steers.n > 0 && t->steers.v[t->steers.n - 1].deferred;
    struct bt_turn_steer_rec *s = record(t, key, text);
    s->deferred = 1;
    int rc = waiting ? -EBUSY : write_steer(t, s);
    if (rc == 0 || rc == -EBUSY)
        return 0; /* written, or written once the coder began the turn */
    free(s->text);
    t->steers.n--;
    return rc;
}

void bt_turn_steer_retry(struct bt_turn *t)
{
    for (size_t i = 0; i < t->steers.n; i++) {
        struct bt_turn_steer_rec *s = &t->steers.v[i];
        if (!s->deferred || s->confirmed)
            continue;
        int rc = closed(t) ? -EAGAIN : write_steer(t, s);
        if (rc == -EBUSY)
            return;
        if (rc < 0) {
            s->deferred = 0;
            steered(t, s, 0, "the turn was ending: it could take nothing more");
        }
    }
}

static struct bt_turn_steer_rec *find(struct bt_turn *t, int64_t key)
{
    for (size_t i = 0; i < t->steers.n; i++)
        if (t->steers.v[i].key == key && !t->steers.v[i].confirmed)
            return &t->steers.v[i];
    return NULL;
}

int bt_turn_steer_signal(struct bt_turn *t, const struct bt_signal *sig)
{
    if (sig->type == BT_SIGNAL_STEER) {
        struct bt_turn_steer_rec *s = find(t, sig->steer.key);
        if (s)
            steered(t, s, sig->steer.taken,
                    sig->steer.taken     ? NULL
                    : sig->steer.message ? sig->steer.message
                                         : "the coder refused it");
        return 1;
    }
    if (sig->type != BT_SIGNAL_USER_TEXT)
        return 0;
    /* pi echoes the prompt first, then each steer it takes in, in the
     * order written (its steering queue); the text may differ from what
     * was written (pi expands prompt templates), so order decides */
    if (!t->steers.prompt_seen) {
        t->steers.prompt_seen = 1;
        return 1;
    }
    for (size_t i = 0; i < t->steers.n; i++) {
        if (!t->steers.v[i].confirmed && !t->steers.v[i].deferred) {
            steered(t, &t->steers.v[i], 1, NULL);
            break;
        }
    }
    return 1;
}

int bt_turn_steer_owes_end(struct bt_turn *t, const struct bt_signal_turn_end *end)
{
    /* a failed or stopped query ends the turn: the coder's own stop */
    if (t->steers.ends_owed == 0 || end->status != BT_TURN_COMPLETED ||
        t->stop != BT_TURN_STOP_NONE)
        return 0;
    t->steers.ends_owed--;
    return 1;
}

void bt_turn_steer_finish(struct bt_turn *t)
{
    for (size_t i = 0; i < t->steers.n; i++) {
        steered(t, &t->steers.v[i], 0,
                t->steers.v[i].deferred ? "the turn ended before the coder began it"
                                        : "the turn ended before the coder took it in");
        free(t->steers.v[i].text);
    }
    free(t->steers.v);
    t->steers.v = NULL;
    t->steers.n = t->steers.cap = 0;
}
