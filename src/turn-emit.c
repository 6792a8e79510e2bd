/* SPDX-License-Identifier: MIT */
/*
 * turn-emit: the turn engine's two ways out, shared by all its files
 * (turn-int.h): an event to the caller (bt_turn_emit), the point to
 * commit what was emitted (bt_turn_batch), the runner's lines to the coder
 * (bt_turn_flush), and the idle watchdog's restart.
 * Below turn.c, turn-end.c, turn-ask.c and turn-steer.c: it calls none of
 * them; a failed write stops the turn through t->broken, which turn.c sets.
 */
#include <stdlib.h>

#include "turn-int.h"
#include "util.h"

/* Keep what the result needs: the answer text, usage, session id. */
static void track(struct bt_turn *t, const struct bt_event *ev)
{
    if (ev->type == BT_EVENT_ITEM_STARTED || ev->type == BT_EVENT_ITEM_DELTA ||
        ev->type == BT_EVENT_ITEM_COMPLETED) {
        bt_answer_add(&t->answer, ev);
    } else if (ev->type == BT_EVENT_USAGE) {
        t->usage = ev->usage;
    } else if (ev->type == BT_EVENT_SESSION_STARTED && ev->native_session_id) {
        free(t->session_id);
        t->session_id = bt_xstrdup(ev->native_session_id);
    }
}

void bt_turn_emit(struct bt_turn *t, struct bt_event *ev)
{
    ev->seq = ++t->seq;
    ev->run = t->o->run_id;
    ev->conversation = t->o->conversation_id;
    ev->ts_ms = bt_now_ms();
    track(t, ev);
    bt_buf_reset(&t->json);
    bt_event_to_json(ev, &t->json);
    t->unbatched = 1;
    if (t->o->on_event)
        t->o->on_event(t->o->data, ev, t->json.data, t->json.len);
}

void bt_turn_batch(struct bt_turn *t)
{
    if (!t->unbatched)
        return;
    t->unbatched = 0;
    if (t->o->on_batch)
        t->o->on_batch(t->o->data);
}

/* The coder got on with the turn: the idle watchdog starts over. Once
 * the turn is being stopped, what the coder says (the answer to the
 * interrupt) is not progress: the reason it was retrying must stay. */
void bt_turn_progressed(struct bt_turn *t)
{
    if (t->o->idle_timeout_ms && !t->ended)
        uv_timer_again(&t->idle);
}

void bt_turn_flush(struct bt_turn *t)
{
    if (!t->wbuf.len)
        return;
    int rc = t->proc ? bt_proc_write(t->proc, t->wbuf.data, t->wbuf.len) : 0;
    bt_buf_reset(&t->wbuf);
    /* a coder that cannot be told what to do cannot finish the turn; after
     * the terminal event a lost write (stdin closing) changes nothing */
    if (rc < 0 && !t->ended && !t->write_error) {
        t->write_error = rc;
        t->broken(t);
    }
}
