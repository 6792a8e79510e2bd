/* SPDX-License-Identifier: MIT */
/* error-kind: the names of the error kinds (see error-kind.h). */
#include "error-kind.h"

#include <string.h>

static const char *const names[BT_ERROR_KIND__COUNT] = {
#define BT_ERROR_KIND_NAME(name, str, meaning) [BT_ERROR_KIND_##name] = (str),
    BT_ERROR_KINDS(BT_ERROR_KIND_NAME)
#undef BT_ERROR_KIND_NAME
};

const char *bt_error_kind_name(enum bt_error_kind k)
{
    return (unsigned)k < BT_ERROR_KIND__COUNT ? names[k] : NULL;
}

enum bt_error_kind bt_error_kind_parse(const char *name)
{
    if (!name)
        return BT_ERROR_KIND_NONE;
    for (int k = BT_ERROR_KIND_NONE + 1; k < BT_ERROR_KIND__COUNT; k++)
        if (strcmp(names[k], name) == 0)
            return (enum bt_error_kind)k;
    return BT_ERROR_KIND_MODEL_ERROR;
}
