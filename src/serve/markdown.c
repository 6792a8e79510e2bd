/* SPDX-License-Identifier: MIT */
/*
 * markdown: cmark-gfm, with raw HTML turned into text (markdown.h).
 */
#include "markdown.h"

#include <cmark-gfm-core-extensions.h>
#include <cmark-gfm-extension_api.h>
#include <cmark-gfm.h>
#include <stdlib.h>
#include <string.h>

static const char *const EXTENSIONS[] = {"table", "strikethrough", "autolink", "tasklist"};

/* An HTML node's literal as text: a block as a code block, so its lines
 * stay as they were written; inline HTML as text in its paragraph. */
static void defuse(cmark_node *n)
{
    int block = cmark_node_get_type(n) == CMARK_NODE_HTML_BLOCK;
    cmark_node *t = cmark_node_new(block ? CMARK_NODE_CODE_BLOCK : CMARK_NODE_TEXT);
    const char *lit = cmark_node_get_literal(n);
    cmark_node_set_literal(t, lit ? lit : "");
    cmark_node_replace(n, t);
    cmark_node_free(n);
}

static void defuse_html(cmark_node *doc)
{
    cmark_node **found = NULL;
    size_t n = 0, cap = 0;
    cmark_iter *it = cmark_iter_new(doc);
    cmark_event_type ev;
    while ((ev = cmark_iter_next(it)) != CMARK_EVENT_DONE) {
        cmark_node *node = cmark_iter_get_node(it);
        cmark_node_type type = cmark_node_get_type(node);
        if (ev != CMARK_EVENT_ENTER ||
            (type != CMARK_NODE_HTML_BLOCK && type != CMARK_NODE_HTML_INLINE))
            continue;
        if (n == cap)
            found = bt_xrealloc(found, (cap = cap ? 2 * cap : 16) * sizeof(cmark_node *));
        found[n++] = node;
    }
    cmark_iter_free(it);
    for (size_t i = 0; i < n; i++) /* after the walk: replacing frees nodes */
        defuse(found[i]);
    free(found);
}

/* 1 if a line of text has more than BT_MARKDOWN_MAX_CELLS pipes. */
static int wide_table(const char *text, size_t len)
{
    size_t pipes = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '\n')
            pipes = 0;
        else if (text[i] == '|' && ++pipes > BT_MARKDOWN_MAX_CELLS)
            return 1;
    }
    return 0;
}

/* The whole text as one code block: cmark escapes it, in linear time. */
static cmark_node *as_code(const char *text)
{
    cmark_node *doc = cmark_node_new(CMARK_NODE_DOCUMENT);
    cmark_node *code = cmark_node_new(CMARK_NODE_CODE_BLOCK);
    cmark_node_set_literal(code, text);
    cmark_node_append_child(doc, code);
    return doc;
}

void bt_markdown_html(struct bt_buf *out, const char *text, size_t len)
{
    cmark_gfm_core_extensions_ensure_registered();
    cmark_parser *p = cmark_parser_new(CMARK_OPT_DEFAULT);
    int tables = !wide_table(text, len);
    for (size_t i = 0; i < sizeof EXTENSIONS / sizeof EXTENSIONS[0]; i++) {
        cmark_syntax_extension *ext = cmark_find_syntax_extension(EXTENSIONS[i]);
        if (ext && (tables || strcmp(EXTENSIONS[i], "table") != 0))
            cmark_parser_attach_syntax_extension(p, ext);
    }
    /* cmark passes invalid UTF-8 through (and a code block's literal
     * stops at a NUL): make it U+FFFD first */
    char *clean = bt_utf8_invalid_at(text, len) < len || memchr(text, '\0', len)
                      ? bt_utf8_sanitize(text, len, NULL)
                      : NULL;
    cmark_node *doc;
    if (len > BT_MARKDOWN_MAX) {
        char *copy = clean ? NULL : bt_xstrndup(text, len);
        doc = as_code(clean ? clean : copy);
        free(copy);
    } else {
        cmark_parser_feed(p, clean ? clean : text, clean ? strlen(clean) : len);
        doc = cmark_parser_finish(p);
        defuse_html(doc);
    }
    free(clean);
    char *html = cmark_render_html(doc, CMARK_OPT_DEFAULT, cmark_parser_get_syntax_extensions(p));
    bt_buf_adds(out, html ? html : "");
    free(html);
    cmark_node_free(doc);
    cmark_parser_free(p);
}
