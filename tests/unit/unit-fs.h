/* SPDX-License-Identifier: MIT */
/*
 * unit-fs: what the unit tests share for their scratch directories.
 */
#ifndef BT_UNIT_FS_H
#define BT_UNIT_FS_H

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/* rm -rf path, never following a symbolic link (a link is removed, not
 * what it points at). */
static inline void bt_unit_rm_rf(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    DIR *d = S_ISDIR(st.st_mode) ? opendir(path) : NULL;
    if (!d) {
        unlink(path);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char *sub = bt_xasprintf("%s/%s", path, e->d_name);
        bt_unit_rm_rf(sub);
        free(sub);
    }
    closedir(d);
    rmdir(path);
}

#endif
