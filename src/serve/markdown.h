/* SPDX-License-Identifier: MIT */
/*
 * markdown: a message's text as HTML for baton serve's page, rendered on
 * the server with cmark-gfm (CommonMark with GitHub's tables,
 * strikethrough, autolinks and task lists, which models write). Model
 * output is not trusted: raw HTML in it becomes text (shown, escaped, never
 * parsed by the browser), and cmark's safe mode drops javascript:,
 * vbscript:, file: and non-image data: link targets. Invalid UTF-8 becomes
 * U+FFFD, and so does a NUL byte. Linked only into baton-serve.
 *
 * Bounded: cmark-gfm 0.29.0.gfm.6 (Debian 12) takes quadratic time on a
 * table row of many cells (20,000 pipes on one line: 3.5 s) and about a
 * microsecond a byte on tables in general, on the server's one thread. So
 * a text over BT_MARKDOWN_MAX bytes is shown whole as one code block (not
 * parsed), and a text with a line of more than BT_MARKDOWN_MAX_CELLS pipes
 * is parsed without the table extension (its rows stay text).
 */
#ifndef BT_MARKDOWN_H
#define BT_MARKDOWN_H

#include <stddef.h>

#include "util.h"

#define BT_MARKDOWN_MAX (128u << 10) /* bytes parsed as markdown */
#define BT_MARKDOWN_MAX_CELLS 256u   /* pipes on one line, with tables on */

/* Append the HTML of text[0..len) to out (a bt_view_html_fn). */
void bt_markdown_html(struct bt_buf *out, const char *text, size_t len);

#endif
