/* SPDX-License-Identifier: MIT */
/*
 * runner-models: the model list runners fill while a coder lists its
 * models (runner.h, models_line).
 */
#include <stdlib.h>
#include <string.h>

#include "input.h"
#include "runner.h"

#define BT_RUNNER_MODELS_MAX 500 /* models kept of one list: a select, not a catalog */

/* 1 if s is one line of UTF-8 text without control characters. */
static int one_line(const char *s)
{
    size_t n = strlen(s);
    if (bt_utf8_invalid_at(s, n) != n)
        return 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return 0;
    return 1;
}

void bt_runner_models_add(struct bt_runner_models *m, const char *value, const char *name)
{
    if (!value || bt_input_model_problem(value) || m->n >= BT_RUNNER_MODELS_MAX)
        return;
    if (!name || !*name)
        name = value;
    if (strlen(name) > 256 || !one_line(name))
        return;
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->v[i].value, value) == 0)
            return;
    m->v = bt_xrealloc(m->v, (m->n + 1) * sizeof(*m->v));
    m->v[m->n].value = bt_xstrdup(value);
    m->v[m->n].name = bt_xstrdup(name);
    m->n++;
}

void bt_runner_models_release(struct bt_runner_models *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free(m->v[i].value);
        free(m->v[i].name);
    }
    free(m->v);
    free(m->current);
    *m = (struct bt_runner_models){0};
}
