/* SPDX-License-Identifier: MIT */
/*
 * fake-coder: stands in for a coder CLI in baton's tests. It replays the
 * recorded stdout of a real JSON-lines coder against whatever the client
 * writes on stdin, and misbehaves on request, all driven by environment
 * variables so baton passes them through untouched.
 *
 *   fake-coder --version      prints FAKE_CODER_VERSION or "codex-cli 0.171.0"
 *
 * Replay (FAKE_CODER_REPLAY=<file.jsonl>). A recorded line is a *response*
 * if it is a JSON object with "id" and no "method", a *server request* if it
 * has both, and plain *output* otherwise (notifications, noise, blank lines).
 * Lines are written in order, byte for byte:
 *   - a response is written only once the client has sent a request with its
 *     id (or a later one: a request writes everything up to and including its
 *     own response, as the real coder would have done);
 *   - output and server requests flow freely, so the notifications that
 *     follow a response (a turn streaming after turn/start) are written
 *     without waiting for a request that never comes;
 *   - after a server request the fake waits for the client's answer (a line
 *     with that id and no "method").
 * A client line is a request if it has "id" and "method", or "id" without
 * "result"/"error" (pi's {"id","type"} commands); an answer if it has "id",
 * no "method" and a "result" or "error"; anything else is consumed.
 * At stdin EOF, or after the last recorded line, it exits (FAKE_CODER_EXIT,
 * default 0). Without FAKE_CODER_REPLAY it reads stdin to EOF and exits.
 *
 * Misbehaviour knobs (all optional, combinable):
 *   FAKE_CODER_DELAY_MS=<ms>     sleep between recorded lines
 *   FAKE_CODER_SPLIT_WRITES      each line in two write()s, 10 ms apart
 *   FAKE_CODER_CRLF              end lines with \r\n
 *   FAKE_CODER_NOISE             a banner and an ANSI line first
 *   FAKE_CODER_STDERR=<text>     written to stderr at start (and at a crash)
 *   FAKE_CODER_EXIT=<code>       exit code when done
 *   FAKE_CODER_CRASH_AFTER=<n>   after n recorded lines: stderr, exit 1 ...
 *   FAKE_CODER_CRASH_SIGNAL      ... or abort() instead (no core file)
 *   FAKE_CODER_HANG_AFTER=<n>    after n lines write nothing more, keep
 *                                reading stdin, never exit
 *   FAKE_CODER_PAUSE_AFTER=<n>   after n lines wait (reading nothing) until
 *   FAKE_CODER_PAUSE_FILE=<file> ... this file exists, then go on
 *   FAKE_CODER_NEVER_EXIT        when done, keep running (even at stdin EOF)
 *   FAKE_CODER_IGNORE_TERM       ignore SIGTERM
 *   FAKE_CODER_GRANDCHILD        fork a child that ignores SIGTERM, keeps
 *                                stdout/stderr open and sleeps forever; its
 *                                pid goes to FAKE_CODER_PIDFILE if set
 *   FAKE_CODER_READ_STDIN_FIRST  read stdin to EOF before writing anything
 *   FAKE_CODER_FDS=<file>        "<fd> <target>" per open fd, at start
 *   FAKE_CODER_ARGV=<file>       argv, one per line
 *   FAKE_CODER_CWD=<file>        the working directory, one line
 *   FAKE_CODER_LOG_STDIN=<file>  append every stdin line received
 *   FAKE_CODER_LOG_STDIN_NS      ... each after CLOCK_REALTIME in ns and a
 *                                space: when it was read, or for the line
 *                                that ended a FAKE_CODER_REPEAT, when it
 *                                arrived (the control benchmark,
 *                                tests/bench/control-bench.py)
 *   FAKE_CODER_EXCLUSIVE=<file>  take an exclusive flock on <file> for the
 *                                whole run and append "start"; if another
 *                                fake coder holds it, append "overlap"
 *   FAKE_CODER_REPEAT=<first>[-<last>][x<times>]
 *                                after writing recorded line <last> (from 1;
 *                                <first> if no range), write lines <first>..
 *                                <last> again, <times> times (forever if not
 *                                given), one line every FAKE_CODER_DELAY_MS
 *                                (100 if unset), until the client writes a
 *                                line; then the replay goes on: a coder
 *                                retrying in a loop until it is stopped
 *   FAKE_CODER_STAMP=<token>     in each written line, the first <token> is
 *                                replaced by CLOCK_REALTIME in ns (decimal)
 *                                taken just before the write, for latency
 *                                benchmarks (tests/bench/bench-latency.c)
 * The readiness order at start is fixed so tests can synchronise on it:
 * FDS/ARGV files, SIGTERM disposition, grandchild + PIDFILE, then STDERR.
 */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

enum kind { K_OUTPUT, K_RESPONSE, K_REQUEST, K_ANSWER, K_NOTE };

struct line {
    const char *s; /* into the replay file's bytes, without the newline */
    size_t n;      /* bytes, without the newline */
    bool nl;       /* the recording ended this line with \n */
    enum kind kind;
    char *id; /* canonical JSON text of "id", or NULL */
};

struct knobs {
    long delay_ms;
    bool split, crlf, noise, never_exit, ignore_term, grandchild, read_first;
    bool crash_signal;
    const char *stderr_text;
    int exit_code;
    long crash_after; /* -1 = never */
    long hang_after;  /* -1 = never */
    long pause_after; /* -1 = never */
    const char *pause_file;
    const char *log_stdin;
    bool log_ns; /* FAKE_CODER_LOG_STDIN_NS */
    const char *stamp;
    long rep_first, rep_last; /* FAKE_CODER_REPEAT lines (from 1); 0 = none */
    long rep_times;           /* -1 = until the client writes */
};

/* Everything lives here so it stays reachable (and LeakSanitizer quiet)
 * whichever way the process ends. */
static struct {
    struct knobs k;
    char *file;         /* replay file bytes */
    struct line *lines; /* recorded lines */
    size_t nlines;
    size_t pos;     /* next recorded line to write */
    size_t allowed; /* responses before this index may be written */
    long written;   /* recorded lines written */
    char *in;       /* stdin buffer */
    size_t in_len, in_off, in_cap;
    bool in_eof;
    int log_fd;
    long long ready_ns; /* FAKE_CODER_LOG_STDIN_NS: when a repeat's poll saw input */
} g = {.log_fd = -1};

/* ---- small helpers -------------------------------------------------- */

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static long env_long(const char *name, long dflt)
{
    const char *v = env(name);
    return v ? strtol(v, NULL, 10) : dflt;
}

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) {
        fputs("fake-coder: out of memory\n", stderr);
        abort();
    }
    return q;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static void write_all(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            _exit(1); /* the reader is gone: nothing left to do */
        s += w;
        n -= (size_t)w;
    }
}

static void write_str(int fd, const char *s)
{
    write_all(fd, s, strlen(s));
}

static void write_file(const char *path, const char *s, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    write_all(fd, s, n);
    close(fd);
}

/* ---- start-up diagnostics ------------------------------------------- */

/* "<fd> <target>" for every open fd but the directory stream's own. */
static void dump_fds(const char *path)
{
    char out[8192];
    size_t len = 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || (int)strtol(e->d_name, NULL, 10) == dirfd(d))
            continue;
        char link[300], target[PATH_MAX];
        snprintf(link, sizeof(link), "/proc/self/fd/%s", e->d_name);
        ssize_t t = readlink(link, target, sizeof(target) - 1);
        target[t < 0 ? 0 : t] = '\0';
        int w = snprintf(out + len, sizeof(out) - len, "%s %s\n", e->d_name, target);
        if (w < 0 || (size_t)w >= sizeof(out) - len)
            break;
        len += (size_t)w;
    }
    closedir(d);
    write_file(path, out, len);
}

static void dump_argv(const char *path, int argc, char **argv)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    for (int i = 0; i < argc; i++) {
        write_str(fd, argv[i]);
        write_str(fd, "\n");
    }
    close(fd);
}

/* The grandchild inherits an ignored SIGTERM from before the fork, so there
 * is no window in which a group SIGTERM could reach it unprotected. */
static void spawn_grandchild(void)
{
    signal(SIGTERM, SIG_IGN);
    pid_t pid = fork();
    if (pid == 0) {
        for (;;)
            pause();
    }
    if (!g.k.ignore_term)
        signal(SIGTERM, SIG_DFL);
    const char *pidfile = env("FAKE_CODER_PIDFILE");
    if (pid > 0 && pidfile) {
        char buf[32];
        int n = snprintf(buf, sizeof(buf), "%d\n", (int)pid);
        write_file(pidfile, buf, (size_t)n);
    }
}

static void read_knobs(void)
{
    struct knobs *k = &g.k;
    k->delay_ms = env_long("FAKE_CODER_DELAY_MS", 0);
    k->split = env("FAKE_CODER_SPLIT_WRITES") != NULL;
    k->crlf = env("FAKE_CODER_CRLF") != NULL;
    k->noise = env("FAKE_CODER_NOISE") != NULL;
    k->never_exit = env("FAKE_CODER_NEVER_EXIT") != NULL;
    k->ignore_term = env("FAKE_CODER_IGNORE_TERM") != NULL;
    k->grandchild = env("FAKE_CODER_GRANDCHILD") != NULL;
    k->read_first = env("FAKE_CODER_READ_STDIN_FIRST") != NULL;
    k->crash_signal = env("FAKE_CODER_CRASH_SIGNAL") != NULL;
    k->stderr_text = env("FAKE_CODER_STDERR");
    k->exit_code = (int)env_long("FAKE_CODER_EXIT", 0);
    k->crash_after = env_long("FAKE_CODER_CRASH_AFTER", -1);
    k->hang_after = env_long("FAKE_CODER_HANG_AFTER", -1);
    k->pause_after = env_long("FAKE_CODER_PAUSE_AFTER", -1);
    k->pause_file = env("FAKE_CODER_PAUSE_FILE");
    k->log_stdin = env("FAKE_CODER_LOG_STDIN");
    k->log_ns = env("FAKE_CODER_LOG_STDIN_NS") != NULL;
    k->stamp = env("FAKE_CODER_STAMP");
    k->rep_times = -1;
    const char *r = env("FAKE_CODER_REPEAT");
    if (r) {
        char *end;
        k->rep_first = k->rep_last = strtol(r, &end, 10);
        if (*end == '-')
            k->rep_last = strtol(end + 1, &end, 10);
        if (*end == 'x')
            k->rep_times = strtol(end + 1, &end, 10);
        if (*end || k->rep_first < 1 || k->rep_last < k->rep_first) {
            fprintf(stderr, "fake-coder: bad FAKE_CODER_REPEAT '%s'\n", r);
            exit(2);
        }
    }
}

/* ---- stdin ---------------------------------------------------------- */

/* Read more of stdin behind the unread bytes; the buffer always keeps one
 * byte spare so next_line can NUL-terminate a final unterminated line. */
static bool fill_stdin(void)
{
    if (g.in_eof)
        return false;
    if (g.in_off > 0) {
        memmove(g.in, g.in + g.in_off, g.in_len - g.in_off);
        g.in_len -= g.in_off;
        g.in_off = 0;
    }
    if (g.in_cap - g.in_len < 4096) {
        g.in_cap = g.in_cap ? g.in_cap * 2 : 65536;
        g.in = xrealloc(g.in, g.in_cap);
    }
    ssize_t r;
    do
        r = read(0, g.in + g.in_len, g.in_cap - g.in_len - 1);
    while (r < 0 && errno == EINTR);
    if (r <= 0) {
        g.in_eof = true;
        return false;
    }
    g.in_len += (size_t)r;
    return true;
}

static void log_line(const char *s, size_t n)
{
    if (!g.k.log_stdin)
        return;
    if (g.log_fd < 0)
        g.log_fd = open(g.k.log_stdin, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (g.log_fd < 0)
        return;
    if (g.k.log_ns) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        long long ns = g.ready_ns ? g.ready_ns : (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
        g.ready_ns = 0; /* the line the repeat's poll saw arrive came then */
        char stamp[32];
        int len = snprintf(stamp, sizeof stamp, "%lld ", ns);
        write_all(g.log_fd, stamp, (size_t)len);
    }
    write_all(g.log_fd, s, n);
    write_all(g.log_fd, "\n", 1);
}

/* The next stdin line without its newline (a final unterminated line
 * counts), NUL-terminated in place; NULL at EOF. Valid until the next call. */
static char *next_line(size_t *n)
{
    for (;;) {
        char *start = g.in + g.in_off;
        char *nl = g.in_len > g.in_off ? memchr(start, '\n', g.in_len - g.in_off) : NULL;
        if (nl || (g.in_eof && g.in_len > g.in_off)) {
            size_t len = nl ? (size_t)(nl - start) : g.in_len - g.in_off;
            g.in_off += len + (nl ? 1 : 0);
            start[len] = '\0';
            log_line(start, len);
            *n = len;
            return start;
        }
        if (!fill_stdin())
            return NULL;
    }
}

static void read_all_stdin(void)
{
    while (fill_stdin())
        ;
}

/* ---- JSON ----------------------------------------------------------- */

static enum kind classify(const char *s, size_t n, char **id_out, bool client)
{
    *id_out = NULL;
    cJSON *root = cJSON_ParseWithLength(s, n);
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return client ? K_NOTE : K_OUTPUT;
    }
    cJSON *id = cJSON_GetObjectItemCaseSensitive(root, "id");
    bool method = cJSON_GetObjectItemCaseSensitive(root, "method") != NULL;
    /* JSON-RPC answers carry result/error; pi answers its extension UI
     * requests with {"type":"extension_ui_response","id":…} */
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(root, "type");
    bool answer = cJSON_GetObjectItemCaseSensitive(root, "result") ||
                  cJSON_GetObjectItemCaseSensitive(root, "error") ||
                  (cJSON_IsString(type) && strstr(type->valuestring, "_response"));
    enum kind k;
    if (!id)
        k = client ? K_NOTE : K_OUTPUT;
    else if (method)
        k = K_REQUEST;
    else if (client)
        k = answer ? K_ANSWER : K_REQUEST;
    else
        k = K_RESPONSE;
    if (id)
        *id_out = cJSON_PrintUnformatted(id);
    cJSON_Delete(root);
    return k;
}

/* ---- the replay file ------------------------------------------------ */

static void load_replay(const char *path)
{
    FILE *f = fopen(path, "rbe");
    if (!f) {
        fprintf(stderr, "fake-coder: cannot open %s: %s\n", path, strerror(errno));
        exit(2);
    }
    size_t len = 0, cap = 0;
    for (;;) {
        if (cap - len < 65536) {
            cap = cap ? cap * 2 : 1 << 20;
            g.file = xrealloc(g.file, cap);
        }
        size_t r = fread(g.file + len, 1, cap - len, f);
        len += r;
        if (r == 0)
            break;
    }
    fclose(f);
    for (size_t off = 0; off < len;) {
        const char *s = g.file + off;
        const char *nl = memchr(s, '\n', len - off);
        size_t n = nl ? (size_t)(nl - s) : len - off;
        g.lines = xrealloc(g.lines, (g.nlines + 1) * sizeof(*g.lines));
        struct line *l = &g.lines[g.nlines++];
        *l = (struct line){.s = s, .n = n, .nl = nl != NULL};
        l->kind = classify(s, n, &l->id, false);
        off += n + (nl ? 1 : 0);
    }
}

/* A recorded request that the recording's client never answered (pi's
 * fire-and-forget extension UI requests) is plain output: it must not wait.
 * The client's side is <replay>.input.jsonl next to the recording; without
 * it every recorded request waits for an answer. */
static void mark_unanswered(const char *path)
{
    size_t n = strlen(path);
    if (n < 6 || strcmp(path + n - 6, ".jsonl") != 0)
        return;
    char *in = xrealloc(NULL, n + 7);
    snprintf(in, n + 7, "%.*s.input.jsonl", (int)(n - 6), path);
    FILE *f = fopen(in, "rbe");
    free(in);
    if (!f)
        return;
    /* "\nid1\nid2\n": each id between newlines, for an exact search */
    char *answered = xrealloc(NULL, 2);
    size_t len = 1;
    answered[0] = '\n';
    answered[1] = '\0';
    char line[65536];
    while (fgets(line, sizeof(line), f)) {
        char *id;
        if (classify(line, strlen(line), &id, true) == K_ANSWER && id) {
            size_t m = strlen(id);
            answered = xrealloc(answered, len + m + 2);
            memcpy(answered + len, id, m);
            answered[len + m] = '\n';
            len += m + 1;
            answered[len] = '\0';
        }
        free(id);
    }
    fclose(f);
    for (size_t i = 0; i < g.nlines; i++) {
        struct line *l = &g.lines[i];
        if (l->kind != K_REQUEST || !l->id)
            continue;
        size_t m = strlen(l->id);
        char *needle = xrealloc(NULL, m + 3);
        snprintf(needle, m + 3, "\n%s\n", l->id);
        if (!strstr(answered, needle))
            l->kind = K_OUTPUT;
        free(needle);
    }
    free(answered);
}

static void free_replay(void)
{
    for (size_t i = 0; i < g.nlines; i++)
        free(g.lines[i].id);
    free(g.lines);
    free(g.file);
    free(g.in);
    g.lines = NULL;
    g.file = g.in = NULL;
}

/* ---- ending ---------------------------------------------------------- */

/* Block forever; keep reading (and logging) stdin so the writer is never
 * stuck on a full pipe. */
static void hang(void)
{
    size_t n;
    while (next_line(&n))
        ;
    free_replay();
    for (;;)
        pause();
}

static void crash(void)
{
    write_str(2, g.k.stderr_text ? g.k.stderr_text : "fake-coder: simulated crash");
    write_str(2, "\n");
    if (g.k.crash_signal) {
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core);
        abort();
    }
    free_replay();
    exit(1);
}

static void done(void)
{
    if (g.k.never_exit)
        hang();
    free_replay();
    exit(g.k.exit_code);
}

/* After every recorded line written (and once before the first). */
static void checkpoint(void)
{
    if (g.k.crash_after >= 0 && g.written >= g.k.crash_after)
        crash();
    if (g.k.hang_after >= 0 && g.written >= g.k.hang_after)
        hang();
    if (g.k.pause_file && g.written == g.k.pause_after)
        while (access(g.k.pause_file, F_OK) != 0)
            sleep_ms(10);
}

/* ---- writing --------------------------------------------------------- */

/* FAKE_CODER_STAMP: a copy of the line with the first token replaced by
 * the time now, or NULL when the line has none. Caller frees. */
static char *stamped(const char *s, size_t *n)
{
    size_t tn = strlen(g.k.stamp);
    const char *at = NULL;
    for (size_t i = 0; tn && !at && i + tn <= *n; i++)
        if (s[i] == g.k.stamp[0] && memcmp(s + i, g.k.stamp, tn) == 0)
            at = s + i;
    if (!at)
        return NULL;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char num[32];
    int k = snprintf(num, sizeof(num), "%lld%09ld", (long long)ts.tv_sec, ts.tv_nsec);
    size_t pre = (size_t)(at - s), len = *n - tn + (size_t)k;
    char *out = xrealloc(NULL, len);
    memcpy(out, s, pre);
    memcpy(out + pre, num, (size_t)k);
    memcpy(out + pre + (size_t)k, at + tn, *n - pre - tn);
    *n = len;
    return out;
}

static void emit(const char *s, size_t n, bool nl)
{
    const char *eol = !nl ? "" : g.k.crlf ? "\r\n" : "\n";
    char *copy = g.k.stamp ? stamped(s, &n) : NULL;
    if (copy)
        s = copy;
    if (g.k.split && n > 1) {
        write_all(1, s, n / 2);
        sleep_ms(10);
        s += n / 2;
        n -= n / 2;
    }
    /* One write for the rest and the end of line, so a line is split at
     * most where the knob says. */
    size_t eol_len = strlen(eol);
    char *buf = xrealloc(NULL, n + eol_len + 1);
    memcpy(buf, s, n);
    memcpy(buf + n, eol, eol_len + 1); /* with its NUL */
    write_all(1, buf, n + strlen(eol));
    free(buf);
    free(copy);
}

static void emit_noise(void)
{
    const char *lines[] = {
        "fake-coder 0.171.0: starting up (not JSON)",
        "\x1b[1;33mWARN\x1b[0m fake-coder: terminal escape noise on stdout",
    };
    for (size_t i = 0; i < 2; i++)
        emit(lines[i], strlen(lines[i]), true);
}

/* ---- replay ---------------------------------------------------------- */

/* A client request: everything up to and including its response may go. */
static void on_request(const char *id)
{
    for (size_t i = g.pos; i < g.nlines; i++) {
        const struct line *l = &g.lines[i];
        if (l->kind == K_RESPONSE && l->id && strcmp(l->id, id) == 0) {
            if (i + 1 > g.allowed)
                g.allowed = i + 1;
            return;
        }
    }
    fprintf(stderr, "fake-coder: no recorded response for id %s\n", id);
}

/* Read one client line and act on it. want: an answer id awaited, or NULL.
 * Returns 1 if it was that answer, 0 otherwise, -1 at EOF. */
static int read_client(const char *want)
{
    size_t n;
    char *s = next_line(&n);
    if (!s)
        return -1;
    char *id;
    enum kind k = classify(s, n, &id, true);
    int got = 0;
    if (k == K_REQUEST)
        on_request(id);
    else if (k == K_ANSWER && want && strcmp(id, want) == 0)
        got = 1;
    free(id);
    return got;
}

/* Wait up to ms for the client; true once it wrote a line (or closed). */
static bool client_spoke(long ms)
{
    if (g.in_len > g.in_off || g.in_eof)
        return true;
    struct pollfd pfd = {.fd = 0, .events = POLLIN};
    if (poll(&pfd, 1, (int)ms) <= 0)
        return false;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    g.ready_ns = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
    return true;
}

/* FAKE_CODER_REPEAT: the block again and again, while the client is quiet.
 * Only output lines repeat: a response or request is written once. */
static void repeat_block(void)
{
    long every = g.k.delay_ms > 0 ? g.k.delay_ms : 100;
    for (long n = 0; g.k.rep_times < 0 || n < g.k.rep_times; n++) {
        for (long i = g.k.rep_first - 1; i < g.k.rep_last && (size_t)i < g.nlines; i++) {
            const struct line *l = &g.lines[i];
            if (client_spoke(every))
                return;
            if (l->kind == K_OUTPUT)
                emit(l->s, l->n, l->nl);
        }
    }
}

static void replay(void)
{
    checkpoint();
    while (g.pos < g.nlines) {
        const struct line *l = &g.lines[g.pos];
        if (l->kind == K_RESPONSE && g.pos >= g.allowed) {
            if (read_client(NULL) < 0)
                return; /* stdin EOF */
            continue;
        }
        if (g.written > 0 && g.k.delay_ms > 0)
            sleep_ms(g.k.delay_ms);
        emit(l->s, l->n, l->nl);
        g.pos++;
        g.written++;
        checkpoint();
        if (g.k.rep_last > 0 && (long)g.pos == g.k.rep_last)
            repeat_block();
        if (l->kind == K_REQUEST) {
            int r;
            while ((r = read_client(l->id)) == 0)
                ;
            if (r < 0)
                return;
        }
    }
}

/* FAKE_CODER_EXCLUSIVE: record whether two runs ever overlap. The lock
 * fd stays open (close-on-exec) until the process ends. */
static void take_exclusive(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    write_str(fd, flock(fd, LOCK_EX | LOCK_NB) == 0 ? "start\n" : "overlap\n");
}

int main(int argc, char **argv)
{
    if (env("FAKE_CODER_ARGV"))
        dump_argv(env("FAKE_CODER_ARGV"), argc, argv);
    if (env("FAKE_CODER_CWD")) {
        char cwd[PATH_MAX];
        char *argv1[] = {getcwd(cwd, sizeof cwd) ? cwd : "?"};
        dump_argv(env("FAKE_CODER_CWD"), 1, argv1);
    }
    if (env("FAKE_CODER_FDS"))
        dump_fds(env("FAKE_CODER_FDS"));
    if (argc > 1 && strcmp(argv[1], "--version") == 0) {
        const char *v = env("FAKE_CODER_VERSION");
        printf("%s\n", v ? v : "codex-cli 0.171.0");
        return 0;
    }
    read_knobs();
    if (env("FAKE_CODER_EXCLUSIVE"))
        take_exclusive(env("FAKE_CODER_EXCLUSIVE"));
    if (g.k.ignore_term)
        signal(SIGTERM, SIG_IGN);
    if (g.k.grandchild)
        spawn_grandchild();
    if (g.k.stderr_text) {
        write_str(2, g.k.stderr_text);
        write_str(2, "\n");
    }
    if (g.k.read_first)
        read_all_stdin();
    if (g.k.noise)
        emit_noise();
    if (env("FAKE_CODER_REPLAY")) {
        load_replay(env("FAKE_CODER_REPLAY"));
        mark_unanswered(env("FAKE_CODER_REPLAY"));
        replay();
    } else {
        checkpoint();
        size_t n;
        while (next_line(&n))
            ;
    }
    done();
    return 0;
}
