/* SPDX-License-Identifier: MIT */
/*
 * fuzz-parser: libFuzzer target for one coder's read side and the JSON-RPC
 * routing behind it: the input is a coder's stdout, framed into lines, fed
 * to the parser, and every signal goes to the runner as in the turn engine.
 * Every event must encode to one valid JSON line. The coder is chosen at
 * build time (BT_FUZZ_CODER).
 */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coder.h"
#include "framer.h"

struct rig {
    const struct bt_coder *coder;
    void *parser, *runner;
    struct bt_parser_sink sink;
    struct bt_buf json, writes;
    int64_t seq;
};

static void on_event(void *data, const struct bt_event *ev)
{
    struct rig *r = data;
    struct bt_event e = *ev;
    e.seq = ++r->seq;
    bt_buf_reset(&r->json);
    bt_event_to_json(&e, &r->json);
    if (r->json.len == 0 || r->json.data[r->json.len - 1] != '\n' ||
        memchr(r->json.data, '\n', r->json.len - 1))
        abort();
    cJSON *j = cJSON_ParseWithLength(r->json.data, r->json.len);
    if (!j)
        abort();
    cJSON_Delete(j);
}

static void on_signal(void *data, const struct bt_signal *sig)
{
    struct rig *r = data;
    if (sig->type != BT_SIGNAL_TURN_END)
        r->coder->runner->on_signal(r->runner, sig, &r->writes, &r->sink);
    bt_buf_reset(&r->writes);
}

static void on_line(void *data, char *line, size_t len)
{
    struct rig *r = data;
    r->coder->parser->line(r->parser, line, len, &r->sink);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct bt_framer_ops ops = {on_line, NULL};
    struct rig r = {
        .coder = bt_coder_find(BT_FUZZ_CODER), .json = BT_BUF_INIT, .writes = BT_BUF_INIT};
    struct bt_runner_config cfg = {.prompt = "p", .cwd = "/", .approval = BT_APPROVAL_AUTO};
    r.parser = r.coder->parser->create();
    r.runner = r.coder->runner->create(&cfg);
    r.sink = (struct bt_parser_sink){on_event, on_signal, &r};
    r.coder->runner->start(r.runner, &r.writes);
    bt_buf_reset(&r.writes);
    struct bt_framer f;
    bt_framer_init(&f, 1 << 20, &ops, &r);
    bt_framer_feed(&f, (const char *)data, size);
    bt_framer_finish(&f);
    if (r.coder->parser->finish)
        r.coder->parser->finish(r.parser, &r.sink);
    bt_framer_release(&f);
    r.coder->parser->destroy(r.parser);
    r.coder->runner->destroy(r.runner);
    bt_buf_release(&r.json);
    bt_buf_release(&r.writes);
    return 0;
}
