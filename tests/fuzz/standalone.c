/* SPDX-License-Identifier: MIT */
/*
 * standalone: a main() for the fuzz targets in ordinary (gcc, sanitizer or
 * valgrind) builds: runs LLVMFuzzerTestOneInput once on every file named on
 * the command line, or on every file of each directory named. Used by the
 * fuzz-regressions test to replay inputs that once crashed.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    size_t len;
    char *data = bt_read_file(path, &len);
    if (!data) {
        fprintf(stderr, "standalone: cannot read %s\n", path);
        return 1;
    }
    LLVMFuzzerTestOneInput((const uint8_t *)data, len);
    free(data);
    printf("ok %s\n", path);
    return 0;
}

static int run_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return fprintf(stderr, "standalone: no %s\n", path), 1;
    if (!S_ISDIR(st.st_mode))
        return run_file(path);
    DIR *d = opendir(path);
    struct dirent *e;
    int rc = 0;
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.') {
            char *p = bt_xasprintf("%s/%s", path, e->d_name);
            rc |= run_path(p);
            free(p);
        }
    if (d)
        closedir(d);
    return rc;
}

int main(int argc, char **argv)
{
    int rc = 0;
    for (int i = 1; i < argc; i++)
        rc |= run_path(argv[i]);
    return rc;
}
