/* SPDX-License-Identifier: MIT */
/* coder: the registry of coders, expanded from coders.def, and the lookup
 * by name. */
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
