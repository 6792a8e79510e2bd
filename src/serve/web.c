/* SPDX-License-Identifier: MIT */
/* web: finding a file of the built-in page by its path (web.h). */
#include "web.h"

#include <stdlib.h>
#include <string.h>

static int by_path(const void *key, const void *elem)
{
    return strcmp(key, ((const struct bt_web_file *)elem)->path);
}

const struct bt_web_file *bt_web_find(const char *path)
{
    if (!path)
        return NULL;
    /* the generator sorts the table by path, so a binary search finds it */
    return bsearch(path, bt_web_files, bt_web_file_count, sizeof bt_web_files[0], by_path);
}
