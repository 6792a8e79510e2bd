/* SPDX-License-Identifier: MIT */
/* coder: the registry of coders, expanded from coders.def, the lookup by
 * name, and the versions each was tested with (the generated table). */
#include "coder.h"

#include <stddef.h>
#include <string.h>

#define BT_CODER(x) extern const struct bt_coder bt_coder_##x;
#define BT_CODER_ON(x, family) BT_CODER(x)
#include "coders.def"
#undef BT_CODER_ON
#undef BT_CODER

const struct bt_coder *const bt_coders[] = {
#define BT_CODER(x) &bt_coder_##x,
#define BT_CODER_ON(x, family) BT_CODER(x)
#include "coders.def"
#undef BT_CODER_ON
#undef BT_CODER
    NULL,
};

const struct bt_coder *bt_coder_find(const char *name)
{
    for (size_t i = 0; bt_coders[i]; i++)
        if (strcmp(bt_coders[i]->name, name) == 0)
            return bt_coders[i];
    return NULL;
}

int bt_coder_steers(const struct bt_coder *c)
{
    return c->runner->steer != NULL;
}

const char *const *bt_coder_tested_versions(const struct bt_coder *c)
{
    static const char *const none[] = {NULL};
    for (size_t i = 0; bt_coder_tested_rows[i].coder; i++)
        if (strcmp(bt_coder_tested_rows[i].coder, c->name) == 0)
            return bt_coder_tested_rows[i].versions;
    return none;
}

int bt_coder_tested(const struct bt_coder *c, const char *version)
{
    if (!version)
        return 0;
    for (const char *const *v = bt_coder_tested_versions(c); *v; v++)
        if (strcmp(*v, version) == 0)
            return 1;
    return 0;
}
