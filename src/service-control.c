/* SPDX-License-Identifier: MIT */
/*
 * service-control: control requests (store.h, "controls") delivered to the
 * turn that runs, by kind, through ONE table of handlers: a new kind of
 * request is one line here, one loop-thread function of the turn engine
 * (turn.h) and one service function that stores it and wakes the owner.
 * Each handler finishes its request (bt_store_control_finish) with a
 * result; one that finds its run ended (its owner finished it first, or
 * died) is finished by the kind's `stranded` function.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "json.h"
#include "service-int.h"
#include "turn.h"

/* {"reason": why} as the result of a refused request (owned). */
static char *reason_json(const char *why)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "reason", why);
    char *text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return text;
}

/* Finish c refused, saying why. */
static void refuse(struct bt_store *s, const struct bt_store_control *c, const char *why)
{
    char *result = reason_json(why);
    bt_store_control_finish(s, c->id, BT_STORE_CONTROL_REFUSED, result);
    free(result);
}

/* --- cancel --------------------------------------------------------------- */

static void cancel_deliver(struct bt_store *s, struct bt_turn *t, const struct bt_store_control *c)
{
    if (bt_turn_stop(t) == 0)
        bt_store_control_finish(s, c->id, BT_STORE_CONTROL_DONE, "{\"stopping\":true}");
    else
        refuse(s, c, "the turn had ended");
}

/* A cancel its owner never saw: the run ended cancelled for it (recovery
 * reads the run's cancel_ms), or it had ended on its own first. */
static void cancel_stranded(struct bt_store *s, const struct bt_store_control *c)
{
    if (c->run_state == BT_STORE_RUN_CANCELLED)
        bt_store_control_finish(s, c->id, BT_STORE_CONTROL_DONE, "{\"stopping\":true}");
    else
        refuse(s, c, "the turn had ended");
}

/* --- the table ------------------------------------------------------------ */

/* A kind of control request. */
struct control_handler {
    const char *kind; /* the stored kind */
    /* deliver c to the live turn t (its loop's thread) and finish c */
    void (*deliver)(struct bt_store *s, struct bt_turn *t, const struct bt_store_control *c);
    /* finish c, pending while its run ended (c->run_state says how) */
    void (*stranded)(struct bt_store *s, const struct bt_store_control *c);
};

static const struct control_handler handlers[] = {
    {"cancel", cancel_deliver, cancel_stranded},
    {"steer", bt_service_steer_deliver, bt_service_steer_stranded},
    {"decision", bt_service_decision_deliver, bt_service_decision_stranded},
};

static const struct control_handler *handler_of(const char *kind)
{
    for (size_t i = 0; i < BT_ARRAY_SIZE(handlers); i++)
        if (strcmp(handlers[i].kind, kind) == 0)
            return &handlers[i];
    return NULL;
}

struct deliver_walk {
    struct bt_store *s;
    struct bt_turn *t;
    int64_t *last;
};

static int deliver_one(void *data, const struct bt_store_control *c)
{
    struct deliver_walk *w = data;
    const struct control_handler *h = handler_of(c->kind);
    *w->last = c->id;
    if (h)
        h->deliver(w->s, w->t, c);
    else
        refuse(w->s, c, "this baton does not know the request's kind");
    return 0;
}

int bt_service_control_deliver(struct bt_store *s, struct bt_turn *t, const char *run,
                               int64_t *last)
{
    struct deliver_walk w = {s, t, last};
    return bt_store_control_pending(s, run, *last, deliver_one, &w);
}

static int strand_one(void *data, const struct bt_store_control *c)
{
    struct bt_store *s = data;
    const struct control_handler *h = handler_of(c->kind);
    if (h)
        h->stranded(s, c);
    else
        refuse(s, c, "this baton does not know the request's kind");
    return 0;
}

int bt_service_control_strand(struct bt_store *s)
{
    return bt_store_control_stranded(s, strand_one, s);
}
