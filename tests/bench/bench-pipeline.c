/* SPDX-License-Identifier: MIT */
/*
 * bench-pipeline: throughput of baton's read path on a recorded-shape codex
 * stream: frame + parse + normalize + encode, then the same plus persisting
 * every event in the store (committed per 64 KiB read, as the turn engine
 * does). Reports MB/s of coder stdout against the DESIGN.md target (600 MB/s
 * on one core for the read+frame+parse+normalize+persist path). Figures
 * only: it never fails on speed.
 *
 * usage: bench-pipeline [MB]    (default 64 MB of generated stream)
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include <ftw.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coder.h"
#include "framer.h"
#include "store.h"

#include <zlib.h>

#define CHUNK 65536

struct bench {
    const struct bt_coder *coder;
    void *parser, *runner;
    struct bt_parser_sink sink;
    struct bt_buf json;
    struct bt_store *store; /* NULL: do not persist */
    const char *run;        /* run id stamped on events */
    int64_t seq, events;
};

static void on_event(void *data, const struct bt_event *ev)
{
    struct bench *b = data;
    struct bt_event e = *ev;
    e.seq = ++b->seq;
    e.run = b->run;
    e.conversation = "bench-conv";
    e.ts_ms = 0;
    bt_buf_reset(&b->json);
    bt_event_to_json(&e, &b->json);
    b->events++;
    if (b->store) {
        struct bt_store_event se = {.run = e.run,
                                    .seq = e.seq,
                                    .type = bt_event_type_name(e.type),
                                    .data = b->json.data,
                                    .len = b->json.len};
        bt_store_event_append(b->store, &se);
    }
}

static void on_signal(void *data, const struct bt_signal *sig)
{
    (void)data;
    (void)sig;
}

static void on_line(void *data, char *line, size_t len)
{
    struct bench *b = data;
    b->coder->parser->line(b->parser, line, len, &b->sink);
}

/* A codex turn streaming a long answer in small deltas, as codex 0.171.0
 * writes item/agentMessage/delta notifications (fixtures/codex). */
static char *make_stream(size_t want, size_t *len)
{
    struct bt_buf s = BT_BUF_INIT;
    static const char words[] = "the quick brown fox jumps over the lazy dog; ";
    int i = 0;
    while (s.len < want) {
        bt_buf_addf(&s,
                    "{\"method\":\"item/agentMessage/delta\",\"params\":{\"threadId\":"
                    "\"01a22760-0481-7d43-b595-86e7298639e7\",\"turnId\":"
                    "\"01a22760-04d0-7430-9849-c92106533e5c\",\"itemId\":\"msg_1_0\","
                    "\"delta\":\"%.*s\"},\"emittedAtMs\":%d}\n",
                    8 + i % 24, words + i % 16, 1795956934 + i);
        i++;
    }
    return bt_buf_detach(&s, len);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double run(const char *coder, const char *stream, size_t len, struct bt_store *store,
                  const char *run_id, int64_t *events)
{
    struct bench b = {
        .coder = bt_coder_find(coder), .json = BT_BUF_INIT, .store = store, .run = run_id};
    struct bt_runner_config cfg = {.prompt = "x"};
    b.parser = b.coder->parser->create();
    b.runner = b.coder->runner->create(&cfg);
    b.sink = (struct bt_parser_sink){on_event, on_signal, &b};
    static const struct bt_framer_ops ops = {on_line, NULL};
    struct bt_framer f;
    bt_framer_init(&f, 0, &ops, &b);
    double t0 = now_s();
    for (size_t off = 0; off < len; off += CHUNK) {
        bt_framer_feed(&f, stream + off, len - off < CHUNK ? len - off : CHUNK);
        if (store)
            bt_store_flush(store);
    }
    bt_framer_finish(&f);
    double secs = now_s() - t0;
    bt_framer_release(&f);
    b.coder->parser->destroy(b.parser);
    b.coder->runner->destroy(b.runner);
    bt_buf_release(&b.json);
    *events = b.events;
    return (double)len / 1e6 / (secs > 0 ? secs : 1e-9);
}

/* A store in a fresh directory with one conversation and one run: stored
 * events must name a real run. */
static struct bt_store *bench_store(char *dir, char *run)
{
    struct bt_store *s = NULL;
    char conv[BT_ID_SIZE];
    if (!mkdtemp(dir) || bt_store_open(dir, &s, NULL) != 0)
        return NULL;
    struct bt_store_conversation_new cn = {.coder = "codex", .cwd = "/", .title = "bench"};
    struct bt_store_run_new rn = {.conversation = conv, .coder = "codex"};
    if (bt_store_conversation_create(s, &cn, conv) || bt_store_run_create(s, &rn, run, NULL)) {
        bt_store_close(s);
        return NULL;
    }
    return s;
}

static int remove_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void remove_tree(const char *dir)
{
    if (nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS) != 0)
        fprintf(stderr, "bench: could not remove %s\n", dir);
}

/* The recorded stream of pi 0.73.1 answering with 200 KB (42 MB of
 * stdout, lines up to 0.6 MB), decompressed into memory. */
static char *pi_stream(size_t *len)
{
    gzFile gz = gzopen(BT_SOURCE_DIR "/fixtures/pi/0.73.1/large.jsonl.gz", "rb");
    if (!gz)
        return NULL;
    struct bt_buf b = BT_BUF_INIT;
    char chunk[65536];
    int n;
    while ((n = gzread(gz, chunk, sizeof(chunk))) > 0)
        bt_buf_add(&b, chunk, (size_t)n);
    gzclose(gz);
    return bt_buf_detach(&b, len);
}

/* One stream through the read path, best of three, without and with the
 * store; figures against the target. */
static void measure(const char *coder, const char *what, const char *stream, size_t len)
{
    int64_t events = 0;
    double parse = 0, persist = 0;
    for (int i = 0; i < 3; i++) {
        double v = run(coder, stream, len, NULL, "bench-run", &events);
        parse = v > parse ? v : parse;
    }
    printf("%s: %.1f MB, %lld events\n", what, (double)len / 1e6, (long long)events);
    printf("  frame+parse+normalize+encode:          %8.1f MB/s\n", parse);
    char dir[] = "/tmp/baton-bench-XXXXXX";
    char run_id[BT_ID_SIZE];
    struct bt_store *s = bench_store(dir, run_id);
    if (!s)
        return;
    persist = run(coder, stream, len, s, run_id, &events);
    printf("  frame+parse+normalize+encode+persist:  %8.1f MB/s  (target 600 MB/s: %s)\n", persist,
           persist >= 600 ? "met" : "not met");
    bt_store_close(s);
    remove_tree(dir);
}

int main(int argc, char **argv)
{
    size_t mb = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 64;
    size_t len;
    char *stream = pi_stream(&len);
    if (stream)
        measure("pi", "pi 0.73.1, recorded 200 KB answer", stream, len);
    else
        printf("pi: fixtures/pi/0.73.1/large.jsonl.gz not readable, skipped\n");
    free(stream);
    stream = make_stream(mb << 20, &len);
    measure("codex", "codex, generated stream of small deltas", stream, len);
    free(stream);
    return 0;
}
