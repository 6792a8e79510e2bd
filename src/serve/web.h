/* SPDX-License-Identifier: MIT */
/*
 * web: the files of the page `baton serve` serves, built into the binary.
 * Every file directly in src/serve/web/ (index.html, app.js, app.css,
 * openapi.json, ...) is turned into a C array at build time by
 * src/serve/web/cmake/embed.cmake, which generates build/generated/web-files.c;
 * a changed, added or removed file is picked up by the next build. Nothing
 * is read from disk at run time, so the page always matches the binary.
 */
#ifndef BT_WEB_H
#define BT_WEB_H

#include <stddef.h>

/* One served file. All members point into static storage. */
struct bt_web_file {
    const char *path;          /* "/" for index.html, else "/NAME": "/app.js" */
    const char *content_type;  /* from the extension: "text/javascript; charset=utf-8" */
    const unsigned char *data; /* the file's bytes, followed by one NUL not counted in len */
    size_t len;                /* bytes in data, without that NUL */
};

/* The files, sorted by path in strcmp order ("/" first); no two paths are
 * the same. */
extern const struct bt_web_file bt_web_files[];
extern const size_t bt_web_file_count;

/* The file served at path ("/", "/app.css"), or NULL when none is. path is
 * matched exactly: no query, no "%" decoding, no "/index.html" alias. */
const struct bt_web_file *bt_web_find(const char *path);

#endif
