/* SPDX-License-Identifier: MIT */
/*
 * service-fanout: one prompt to several coders at once (`baton run -c
 * a,b,c`, POST /v1/conversations with "coders"): a group, and in it one
 * conversation per coder with the prompt stored queued, each for a
 * detached worker to take, so the coders work in parallel and outlive the
 * front end that asked. The front end starts the workers and follows them
 * (store.h, "groups").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "service-work.h"

int bt_service_coder_list(const char *list, struct bt_strv *v, size_t max)
{
    bt_strv_init(v);
    for (const char *p = list;;) {
        size_t len = strcspn(p, ",");
        if (len == 0 || len >= sizeof((struct bt_service_fanned *)0)->coder || v->n == max)
            return -1;
        char *name = bt_xmalloc(len + 1);
        memcpy(name, p, len);
        name[len] = '\0';
        bt_strv_push_take(v, name);
        if (!p[len])
            return 0;
        p += len + 1;
    }
}

static int refuse(struct bt_service_fanout *f, enum bt_service_result result, char *message)
{
    f->result = result;
    f->message = message;
    return -EINVAL;
}

/* Check the request before anything is made. */
static int check(const struct bt_service_turn *t, const char *const *coders, size_t n,
                 struct bt_service_fanout *f)
{
    if (n == 0 || n > BT_SERVICE_FANOUT_MAX)
        return refuse(
            f, BT_SERVICE_USAGE,
            bt_xasprintf("a fan-out takes 1 to %d coders, not %zu", BT_SERVICE_FANOUT_MAX, n));
    for (size_t i = 0; i < n; i++) {
        if (!coders[i][0] || strlen(coders[i]) >= sizeof f->v[0].coder)
            return refuse(f, BT_SERVICE_USAGE, bt_xstrdup("a coder's name is empty or too long"));
        if (!bt_coder_find(coders[i]))
            return refuse(f, BT_SERVICE_USAGE, bt_xasprintf("unknown coder '%s'", coders[i]));
    }
    if (t->branch)
        return refuse(f, BT_SERVICE_USAGE,
                      bt_xstrdup("a branch names one branch: with several coders each gets its "
                                 "own, baton/<short id>"));
    if (!t->prompt)
        return refuse(f, BT_SERVICE_USAGE, bt_xstrdup("a fan-out needs a prompt"));
    return 0;
}

/* Make member m's conversation, its prompt queued. */
static void make_one(struct bt_store *s, const struct bt_service_turn *base, const char *group,
                     struct bt_service_fanned *m)
{
    struct bt_service_turn t = *base;
    struct bt_service_outcome out = {0};
    t.coder = m->coder;
    t.group = group;
    t.queue = BT_STORE_QUEUE_ALWAYS;
    t.on_event = NULL;
    t.on_tick = NULL;
    t.on_run = NULL;
    if (bt_service_run(s, &t, &out) != 0) {
        m->result = out.result == BT_SERVICE_OK ? BT_SERVICE_FAILED : out.result;
        m->message = out.message ? out.message : bt_xstrdup("it could not start");
        return;
    }
    m->result = BT_SERVICE_OK;
    memcpy(m->conversation, out.conversation, BT_ID_SIZE);
    m->queued = out.queued;
    free(out.message);
}

int bt_service_fanout(struct bt_store *s, const struct bt_service_turn *t,
                      const char *const *coders, size_t n, struct bt_service_fanout *f)
{
    memset(f, 0, sizeof *f);
    int rc = check(t, coders, n, f);
    if (rc)
        return rc;
    if (bt_store_group_create(s, t->prompt, f->group) != 0) {
        f->group[0] = '\0';
        refuse(f, BT_SERVICE_FAILED, bt_xasprintf("cannot make the group: %s", bt_store_errmsg(s)));
        return BT_ESTORE;
    }
    f->v = bt_xcalloc(n, sizeof *f->v);
    f->n = n;
    size_t made = 0;
    for (size_t i = 0; i < n; i++) {
        snprintf(f->v[i].coder, sizeof f->v[i].coder, "%s", coders[i]);
        make_one(s, t, f->group, &f->v[i]);
        made += f->v[i].conversation[0] != '\0';
    }
    if (made)
        return 0;
    bt_store_group_delete_empty(s, f->group); /* none made: no group to show */
    f->group[0] = '\0';
    f->result = f->v[0].result;
    f->message = bt_xstrdup(f->v[0].message);
    return -EINVAL;
}

void bt_service_fanout_release(struct bt_service_fanout *f)
{
    for (size_t i = 0; i < f->n; i++)
        free(f->v[i].message);
    free(f->v);
    free(f->message);
    memset(f, 0, sizeof *f);
}
