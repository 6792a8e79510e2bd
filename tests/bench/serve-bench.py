#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""serve-bench: one `baton serve` under load (docs/performance.md).

A scratch BATON_HOME, the fake coder as codex replaying
fixtures/codex/0.171.0/text.jsonl with its answer replaced by --deltas
stamped deltas written --delay-ms apart (FAKE_CODER_STAMP puts the fake's
CLOCK_REALTIME in ns into each line just before its write). Then:

  - --all /v1/events followers and one controller stream connect first
    ("from now on": they must see every event of every run);
  - --runs conversations are created at once (POST /v1/conversations,
    each starting a turn in its worker), and --per-conv followers of each
    (GET /v1/conversations/ID/events?follow=1&run=FIRST) connect as soon as it
    exists; whenever the controller sees a conversation's turn.completed
    it sends the next prompt (POST .../messages), --turns turns each;
  - one `baton run --json` turn in the same home beside them (unless
    --no-cli): coder line -> baton's stdout under the same load, and its
    events as the /v1/events followers get them, the worker's part and
    the server's part of the same events apart; then the reference: the
    fake coder run directly (its requests from the fixture's
    .input.jsonl), its stdout read the same way under the same load.
    What baton adds is the followers' p50 and p99 minus the reference's
    (DESIGN.md's target is on the latency added: a machine whose
    wakeups alone cost a millisecond at p99 shows it in both).

Followers run in --procs processes (selectors, raw sockets, HTTP/1.1
chunked as a browser gets it). Each checks, against the store's own
events read afterwards (GET .../events?run=RUN, no follow), that it got
seq 1..n of every run exactly once and in order. Latency: the time the
recv() that completed a frame returned minus the stamp the fake coder
put in that line; a second figure against the event's own `ts` (when the
worker made it; milliseconds, truncated, so +0..1 ms). baton-serve's
VmRSS/VmHWM and utime+stime are read from /proc every 50 ms.

Figures only: nothing is asserted; exit 0 unless an argument is wrong
or the server cannot start (then "failed: ...", exit 1). --tsv FILE
appends key<TAB>value lines for bench.sh's summary.
"""
import argparse
import calendar
import concurrent.futures
import http.client
import json
import multiprocessing
import os
import resource
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

TOP = Path(__file__).resolve().parents[2]
STAMP = "@@STAMP@@"
CLK_TCK = os.sysconf("SC_CLK_TCK")
OTHER_CODERS = ["pi", "claude", "gemini", "opencode", "copilot"]


# ---- an SSE reader over a raw socket -------------------------------------

class Reader:
    """An HTTP/1.1 response with a chunked SSE body, fed bytes as they come:
    headers, then chunks, then frames (blocks ending with a blank line)."""

    def __init__(self):
        self.raw = b""  # bytes not yet taken as headers or chunks
        self.status = None
        self.chunked = False
        self.chunk_left = 0  # bytes of the current chunk still to come
        self.text = b""  # body bytes not yet split into frames
        self.ended = False

    def feed(self, data):
        """Frames completed by data: a list of (id, data) (either None)."""
        self.raw += data
        if self.status is None:
            end = self.raw.find(b"\r\n\r\n")
            if end < 0:
                return []
            head = self.raw[:end].decode("latin-1").split("\r\n")
            self.raw = self.raw[end + 4:]
            self.status = int(head[0].split()[1])
            self.chunked = any(h.lower().replace(" ", "") == "transfer-encoding:chunked"
                               for h in head[1:])
        if not self.chunked:
            self.text += self.raw
            self.raw = b""
        else:
            self._dechunk()
        return self._frames()

    def _dechunk(self):
        while self.raw and not self.ended:
            if self.chunk_left > 0:
                take = self.raw[:self.chunk_left]
                self.text += take
                self.raw = self.raw[len(take):]
                self.chunk_left -= len(take)
                if self.chunk_left == 0:
                    self.chunk_left = -2  # its CRLF
                continue
            if self.chunk_left < 0:
                if len(self.raw) < 2:
                    return
                self.raw = self.raw[2:]
                self.chunk_left = 0
                continue
            nl = self.raw.find(b"\r\n")
            if nl < 0:
                return
            size = int(self.raw[:nl].split(b";")[0], 16)
            self.raw = self.raw[nl + 2:]
            if size == 0:
                self.ended = True
            self.chunk_left = size

    def _frames(self):
        out = []
        while True:
            end = self.text.find(b"\n\n")
            if end < 0:
                return out
            block = self.text[:end].decode("utf-8", errors="replace")
            self.text = self.text[end + 2:]
            fid = data = None
            for line in block.split("\n"):
                if line.startswith("id: "):
                    fid = line[4:]
                elif line.startswith("data: "):
                    data = line[6:] if data is None else data + "\n" + line[6:]
            if data is not None and fid is not None:
                out.append((fid, data))


def open_stream(port, token, path):
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.sendall((f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
               f"Authorization: Bearer {token}\r\nAccept: text/event-stream\r\n"
               f"Cache-Control: no-cache\r\n\r\n").encode())
    return s


def ts_ns(ts):
    """An event's RFC 3339 ts (ms, UTC) as ns since the epoch."""
    t = time.strptime(ts[:19], "%Y-%m-%dT%H:%M:%S")
    return (calendar.timegm(t) * 1000 + int(ts[20:23])) * 1_000_000


class Follower:
    """One event stream and what it got: for every event (run, seq, done,
    t_recv, stamp, ts)."""

    def __init__(self, kind, conv, path, sock):
        self.kind, self.conv, self.path, self.sock = kind, conv, path, sock
        self.reader = Reader()
        self.events = []
        self.completed = 0  # turn.completed frames
        self.error = None
        self.closed = False
        self.bad_frames = 0
        self.head_ns = None  # when its response's head was in

    def on_data(self, data, t):
        try:
            frames = self.reader.feed(data)
        except (ValueError, IndexError) as e:
            self.error = f"unreadable response: {e}"
            return
        if self.head_ns is None and self.reader.status is not None:
            self.head_ns = t
        if self.reader.status not in (None, 200):
            self.error = f"HTTP {self.reader.status}"
        for fid, text in frames:
            try:
                ev = json.loads(text)
                run, seq = ev["run"], ev["seq"]
            except (ValueError, KeyError, TypeError):
                self.bad_frames += 1
                continue
            if fid != f"{run}:{seq}":
                self.bad_frames += 1
            stamp = None
            if ev.get("type") == "item.delta":
                d = ev.get("text", "")
                if d.startswith("bt-stamp="):
                    try:
                        stamp = int(d[9:].split(" ", 1)[0])
                    except ValueError:
                        pass
            done = ev.get("type") == "turn.completed"
            self.completed += done
            self.events.append((run, seq, done, t, stamp, ts_ns(ev.get("ts", "1970-01-01T00:00:00.000Z"))))


def wait_head(f, timeout=10.0):
    """Read until the response's head is in: the server has taken the
    request (a /v1/events stream's "from now on" is fixed by then)."""
    f.sock.settimeout(timeout)
    try:
        while f.reader.status is None and not f.error:
            data = f.sock.recv(65536)
            if not data:
                f.error = "closed before the response"
                break
            f.on_data(data, time.time_ns())
    except OSError as e:
        f.error = f"no response: {e}"


def follower_main(pipe, port, token):
    """A follower process: opens the streams the parent names, reads them
    all with one selector until told to stop, sends back what each got."""
    sel = selectors.DefaultSelector()
    sel.register(pipe, selectors.EVENT_READ, None)
    streams = []
    stop_at = None
    want = {}
    got = []  # (stream, bytes, when they came), parsed once told to stop
    while True:
        if stop_at is not None:
            for st, data, t in got:
                if data:
                    st.on_data(data, t)
                else:
                    st.closed = True
            got = []
        timeout = None if stop_at is None else max(0.0, stop_at - time.monotonic())
        if stop_at is not None and (timeout == 0 or all(
                st.closed or st.error or st.completed >= want.get(st.kind, 1 << 30)
                for st in streams)):
            break
        # a frame's time is when its bytes came: they are parsed once the
        # load is over (told to stop), so that no stream's parsing (0.1-0.2
        # ms a frame in Python) holds back the reading of the others, in
        # this round or the next
        for key, _ in sel.select(timeout if timeout is not None else 1.0):
            st = key.data
            if st is None:
                msg = pipe.recv()
                if msg[0] == "open":
                    t0 = time.monotonic()
                    for kind, conv, path in msg[1]:
                        f = Follower(kind, conv, path, open_stream(port, token, path))
                        streams.append(f)
                        wait_head(f)
                        if not f.error:
                            f.sock.setblocking(False)
                            sel.register(f.sock, selectors.EVENT_READ, f)
                    pipe.send(("opened", (time.monotonic() - t0) * 1000))
                elif msg[0] == "stop":
                    want = msg[2]
                    stop_at = time.monotonic() + msg[1]
                continue
            try:
                data = st.sock.recv(262144)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError as e:
                data, st.error = b"", f"recv: {e}"
            got.append((st, data, time.time_ns()))
            if not data:
                sel.unregister(st.sock)
    ru = resource.getrusage(resource.RUSAGE_SELF)
    pipe.send(("done", [(f.kind, f.conv, f.path, f.events, f.error, f.closed and not f.error,
                         f.bad_frames, f.reader.status, f.head_ns) for f in streams],
               ru.ru_utime + ru.ru_stime))
    for f in streams:
        f.sock.close()


def reader_main(pipe, argv, env, cwd, stdin_path, events_json):
    """A process run beside the load, its stdout read here as a follower
    reads its stream: [(run, seq, t, stamp)] for each line (run and seq
    None unless events_json: baton's events), and its exit status."""
    with open(stdin_path or os.devnull, "rb") as stdin:
        p = subprocess.Popen(argv, env=env, cwd=cwd, stdin=stdin, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL)
    events, buf = [], b""
    while True:
        data = os.read(p.stdout.fileno(), 65536)
        t = time.time_ns()
        if not data:
            break
        buf += data
        *lines, buf = buf.split(b"\n")
        for ln in lines:
            run = seq = stamp = None
            at = ln.find(b"bt-stamp=")
            if at >= 0:
                digits = ln[at + 9:].split(b" ", 1)[0]
                stamp = int(digits) if digits.isdigit() else None
            if events_json:
                ev = json.loads(ln)
                run, seq = ev["run"], ev["seq"]
                if ev.get("type") != "item.delta":
                    stamp = None
            events.append((run, seq, t, stamp))
    pipe.send((events, p.wait()))


# ---- the parent: server, requests, controller, sampler ---------------------

class Api:
    """Plain requests, one connection each (threads share nothing)."""

    def __init__(self, port, token):
        self.port, self.token = port, token

    def call(self, method, path, body=None, timeout=120):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        headers = {"Authorization": f"Bearer {self.token}"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        try:
            c.request(method, path, body=data, headers=headers)
            r = c.getresponse()
            return r.status, r.read()
        finally:
            c.close()


class Sampler(threading.Thread):
    """baton-serve's VmRSS, VmHWM and utime+stime every interval s."""

    def __init__(self, pid, interval=0.05):
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.samples = []  # (monotonic, rss KiB, hwm KiB, cpu s)
        self.halt = threading.Event()

    def read(self):
        try:
            status = Path(f"/proc/{self.pid}/status").read_text()
            stat = Path(f"/proc/{self.pid}/stat").read_text()
        except OSError:
            return None
        kib = {ln.split(":")[0]: int(ln.split()[1]) for ln in status.splitlines()
               if ln.startswith(("VmRSS:", "VmHWM:"))}
        f = stat.rsplit(")", 1)[1].split()
        return (time.monotonic(), kib.get("VmRSS", 0), kib.get("VmHWM", 0),
                (int(f[11]) + int(f[12])) / CLK_TCK)

    def run(self):
        while not self.halt.is_set():
            s = self.read()
            if s:
                self.samples.append(s)
            self.halt.wait(self.interval)

    def cpu_between(self, t0, t1):
        """CPU s and wall s of the samples in [t0, t1], and the busiest
        one-second window's CPU share."""
        win = [s for s in self.samples if t0 <= s[0] <= t1]
        if len(win) < 2:
            return 0.0, 0.0, 0.0
        peak, j = 0.0, 0
        for i in range(len(win)):
            while win[i][0] - win[j][0] > 1.0:
                j += 1
            if i > j and win[i][0] - win[j][0] >= 0.9:
                peak = max(peak, (win[i][3] - win[j][3]) / (win[i][0] - win[j][0]))
        return win[-1][3] - win[0][3], win[-1][0] - win[0][0], peak


def busy_ticks():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v) - v[3] - v[4], sum(v)  # busy (all but idle, iowait), total


def write_replay(src, dst, deltas):
    """src with its answer deltas replaced by `deltas` stamped ones."""
    lines = Path(src).read_text().splitlines()
    delta = next(ln for ln in lines if '"item/agentMessage/delta"' in ln)
    out, done = [], False
    for ln in lines:
        if '"item/agentMessage/delta"' in ln:
            if not done:
                m = json.loads(delta)
                for i in range(deltas):
                    m["params"]["delta"] = f"bt-stamp={STAMP} {i:04d} "
                    out.append(json.dumps(m, separators=(",", ":")))
                done = True
            continue
        out.append(ln)
    Path(dst).write_text("\n".join(out) + "\n")


def pct(values, p):
    """Nearest-rank percentile of a sorted list."""
    if not values:
        return None
    k = max(0, min(len(values) - 1, int(-(-p * len(values) // 100)) - 1))
    return values[k]


def us(ns):
    return "-" if ns is None else f"{ns / 1000:.0f} us" if abs(ns) < 10_000_000 \
        else f"{ns / 1e6:.1f} ms"


class Bench:
    """One sitting: the server, its load, what every follower got."""

    def __init__(self, a):
        self.a = a
        self.dir = tempfile.mkdtemp(prefix="serve-bench-", dir=a.scratch)
        self.home = os.path.join(self.dir, "home")
        self.project = os.path.join(self.dir, "project")
        os.makedirs(self.project)
        os.makedirs(os.path.join(self.dir, "codex-home"))
        self.replay = os.path.join(self.dir, "replay.jsonl")
        write_replay(a.fixture, self.replay, a.deltas)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": self.dir,
            "LANG": "C.UTF-8", "NO_COLOR": "1", "BATON_HOME": self.home,
            "CODEX_HOME": os.path.join(self.dir, "codex-home"), "TMUX_TMPDIR": self.dir,
            "BATON_CODEX_BIN": a.fake, "FAKE_CODER_REPLAY": self.replay,
            "FAKE_CODER_DELAY_MS": str(a.delay_ms), "FAKE_CODER_STAMP": STAMP,
        }
        for c in OTHER_CODERS:
            env[f"BATON_{c.upper()}_BIN"] = os.path.join(self.dir, f"no-such-{c}")
        self.env = env
        self.lock = threading.Lock()
        self.convs = []  # ours, in creation order
        self.completions = {}  # conversation -> turn.completed seen by the controller
        self.sent = {}  # conversation -> turns asked for
        self.first_run = {}  # conversation -> the run its 201 named
        self.statuses = {}  # turn.completed status -> count
        self.requests = {}  # "POST /v1/conversations 201" -> count
        self.request_ms = {"create": [], "message": []}
        self.posts = []  # futures of follow-ups
        self.all_done = threading.Event()
        self.cli = None  # (events [(run, seq, t, stamp)], rc)
        self.direct = None  # the same for the coder read directly
        self.notes = []  # what looked wrong

    # -- the server --
    def start_serve(self):
        self.serve_err = open(os.path.join(self.dir, "serve.err"), "wb")
        self.proc = subprocess.Popen([self.a.baton, "serve", "--listen", "127.0.0.1:0"],
                                     env=self.env, cwd=self.dir, stdout=subprocess.PIPE,
                                     stderr=self.serve_err)
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        if not sel.select(20):
            raise RuntimeError("baton serve printed nothing in 20 s")
        line = self.proc.stdout.readline().decode().strip()
        if not line.startswith("http://127.0.0.1:") or "#token=" not in line:
            raise RuntimeError(f"baton serve's first line is not its address: {line!r}")
        self.port = int(line.split(":")[2].split("/")[0])
        self.token = line.split("#token=")[1]
        self.api = Api(self.port, self.token)

    def stop_serve(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.notes.append("baton serve did not stop within 10 s of SIGTERM (killed)")
            self.proc.kill()
            self.proc.wait()
        self.serve_err.close()

    def count(self, what):
        with self.lock:
            self.requests[what] = self.requests.get(what, 0) + 1

    # -- turns --
    def create(self, i):
        t0 = time.monotonic()
        st, body = self.api.call("POST", "/v1/conversations", {
            "coder": "codex", "model": "baton-test", "cwd": self.project,
            "prompt": f"bench conversation {i}", "approval": "never"})
        self.request_ms["create"].append((time.monotonic() - t0) * 1000)
        self.count(f"POST /v1/conversations {st}")
        if st != 201:
            self.notes.append(f"POST /v1/conversations: {st} {body[:300]!r}")
            return None
        doc = json.loads(body)
        conv = doc["conversation"]["id"]
        with self.lock:
            self.first_run[conv] = doc["run"]
            self.convs.append(conv)
            self.sent[conv] = 1
        self.next_turn(conv)
        return conv

    def message(self, conv, n):
        t0 = time.monotonic()
        st, body = self.api.call("POST", f"/v1/conversations/{conv}/messages",
                                 {"prompt": f"follow-up {n}", "approval": "never"})
        self.request_ms["message"].append((time.monotonic() - t0) * 1000)
        state = json.loads(body).get("state", "?") if st == 202 else "error"
        self.count(f"POST /v1/conversations/ID/messages {st} {state}")
        if st != 202:
            self.notes.append(f"POST /v1/conversations/{conv}/messages: {st} {body[:300]!r}")

    def next_turn(self, conv):
        """Send the next prompt once the controller saw the last turn end."""
        with self.lock:
            if conv not in self.sent:
                return
            done, sent = self.completions.get(conv, 0), self.sent[conv]
            if done >= self.a.turns:
                if all(self.completions.get(c, 0) >= self.a.turns for c in self.sent) and \
                        len(self.sent) == self.a.runs:
                    self.all_done.set()
                return
            if done < sent:
                return
            self.sent[conv] = sent + 1
            self.posts.append(self.pool.submit(self.message, conv, sent + 1))

    def controller(self, sock, r):
        """A /v1/events stream (its head read into Reader r): each
        turn.completed of ours asks for the next turn."""
        while not self.all_done.is_set():
            try:
                data = sock.recv(262144)
            except socket.timeout:
                continue
            except OSError:
                data = b""
            if not data:
                self.notes.append("the controller's /v1/events stream ended")
                return
            for _, text in r.feed(data):
                ev = json.loads(text)
                if ev.get("type") != "turn.completed":
                    continue
                conv = ev["conversation"]
                with self.lock:
                    self.completions[conv] = self.completions.get(conv, 0) + 1
                    s = ev.get("status", "?")
                    self.statuses[s] = self.statuses.get(s, 0) + 1
                self.next_turn(conv)

    def beside(self, argv, stdin_path, events_json):
        """reader_main's answer for argv, run in a process of its own (a
        thread here waited for the GIL behind the controller: +1 ms at
        p99)."""
        ctx = multiprocessing.get_context("fork")
        mine, theirs = ctx.Pipe()
        pr = ctx.Process(target=reader_main, daemon=True,
                         args=(theirs, argv, self.env, self.project, stdin_path, events_json))
        pr.start()
        got = mine.recv()
        pr.join()
        return got

    def cli_turn(self):
        """`baton run --json` beside the served turns: its stdout stamped;
        then the reference, the coder itself read directly (its requests
        from the fixture's .input.jsonl), under the same load."""
        self.cli = self.beside([self.a.baton, "run", "--json", "--approval", "never", "-m",
                                "baton-test", "bench cli turn"], None, True)
        inp = self.a.fixture[:-len(".jsonl")] + ".input.jsonl"
        if os.path.exists(inp):
            self.direct = self.beside([self.a.fake, "app-server", "--listen", "stdio://"], inp,
                                      False)

    # -- followers --
    def start_followers(self):
        ctx = multiprocessing.get_context("fork")
        self.procs = []
        for _ in range(self.a.procs):
            mine, theirs = ctx.Pipe()
            pr = ctx.Process(target=follower_main, args=(theirs, self.port, self.token),
                             daemon=True)
            pr.start()
            self.procs.append((pr, mine, threading.Lock()))
        self.next_proc = 0
        self.open_ms = []

    def attach(self, streams):
        """Open streams [(kind, conv, path)], spread over the processes."""
        by_proc = {}
        with self.lock:
            for s in streams:
                by_proc.setdefault(self.next_proc, []).append(s)
                self.next_proc = (self.next_proc + 1) % len(self.procs)
        for i, mine in by_proc.items():
            _, pipe, plock = self.procs[i]
            with plock:
                pipe.send(("open", mine))
                self.open_ms.append(pipe.recv()[1])

    def collect(self, want):
        out, cpu = [], 0.0
        for _, pipe, _ in self.procs:
            pipe.send(("stop", self.a.grace, want))
        for pr, pipe, _ in self.procs:
            if pipe.poll(self.a.grace + 30):
                _, got, c = pipe.recv()
                out += got
                cpu += c
            else:
                self.notes.append("a follower process sent nothing back")
            pr.join(5)
        return out, cpu

    # -- the store's own account --
    def truth(self):
        """{conversation: [(run, turn, state, [(seq, type)])]} as the store
        has it, every conversation of the home."""
        st, body = self.api.call("GET", "/v1/conversations?limit=1000")
        convs = [c["id"] for c in json.loads(body)["conversations"]] if st == 200 else []
        out = {}
        for conv in convs:
            st, body = self.api.call("GET", f"/v1/conversations/{conv}")
            runs = sorted(json.loads(body)["runs"], key=lambda r: r["turn"]) if st == 200 else []
            out[conv] = []
            for r in runs:
                evs = []
                try:
                    st, body = self.api.call(
                        "GET", f"/v1/conversations/{conv}/events?run={r['id']}", timeout=15)
                    for block in body.decode().split("\n\n"):
                        for ln in block.split("\n"):
                            if ln.startswith("data: "):
                                ev = json.loads(ln[6:])
                                evs.append((ev["seq"], ev["type"]))
                except (OSError, http.client.HTTPException) as e:
                    self.notes.append(f"GET events?run={r['id']} (state {r['state']}) did not "
                                      f"end within 15 s: {e}")
                out[conv].append((r["id"], r["turn"], r["state"], evs))
        return out

    def run(self):
        a = self.a
        self.start_serve()
        self.start_followers()
        self.sampler = Sampler(self.proc.pid)
        self.sampler.start()
        time.sleep(0.5)
        idle = self.sampler.read()
        self.idle_rss = idle[1] if idle else 0
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=a.runs + 8)
        self.attach([("all", None, "/v1/events") for _ in range(a.all)])
        ctl = open_stream(self.port, self.token, "/v1/events")
        ctl_f = Follower("controller", None, "/v1/events", ctl)
        wait_head(ctl_f)
        ctl.settimeout(0.5)
        ctl_t = threading.Thread(target=self.controller, args=(ctl, ctl_f.reader),
                                 daemon=True)
        ctl_t.start()
        self.t0, self.busy0 = time.monotonic(), busy_ticks()
        creates = [self.pool.submit(self.create, i) for i in range(a.runs)]
        cli_t = None
        if not a.no_cli:
            cli_t = threading.Thread(target=self.cli_turn, daemon=True)
            cli_t.start()
        for f in concurrent.futures.as_completed(creates):
            conv = f.result()
            if conv:
                # from the run the 201 named: a follower that connects after
                # it ended must still get it (without run= it starts at the
                # running one)
                path = f"/v1/conversations/{conv}/events?follow=1&run={self.first_run[conv]}"
                self.attach([("conv", conv, path)
                             for _ in range(a.per_conv)])
        self.created = time.monotonic()
        if not self.all_done.wait(a.timeout):
            left = [c for c in self.convs if self.completions.get(c, 0) < a.turns]
            self.notes.append(f"after {a.timeout} s, {len(left)} conversations had not seen "
                              f"{a.turns} turn.completed on the controller's /v1/events "
                              f"stream (e.g. {left[:3]})")
        for f in list(self.posts):
            f.result()
        if cli_t:
            cli_t.join(a.timeout)
        self.t1, self.busy1 = time.monotonic(), busy_ticks()
        total = a.runs * a.turns + (0 if a.no_cli else 1)
        self.got, self.client_cpu = self.collect({"conv": a.turns, "all": total})
        self.all_done.set()
        ctl.close()
        self.sampler.halt.set()
        self.sampler.join()
        self.store = self.truth()
        end = self.sampler.read()
        self.end_rss = end[1] if end else 0
        self.stop_serve()

    # -- what it all comes to --
    def check(self):
        """Compare each follower with the store: lost, duplicated, out of
        order, unexpected events; the latencies of what it got."""
        runs = {}  # run -> (conv, turn index in its conversation, [seq])
        self.stored = self.bad_runs = 0
        for conv, rs in self.store.items():
            for i, (rid, _turn, state, evs) in enumerate(rs):
                seqs = [q for q, _ in evs]
                runs[rid] = (conv, i, seqs)
                self.stored += len(seqs)
                if state != "completed" or seqs != list(range(1, len(seqs) + 1)) or \
                        not evs or evs[-1][1] != "turn.completed":
                    self.bad_runs += 1
                    self.notes.append(f"run {rid} of {conv}: state {state}, {len(seqs)} events, "
                                      f"last {evs[-1][1] if evs else None}")
        self.n_runs = len(runs)
        c = {"lost": 0, "dup": 0, "disorder": 0, "extra": 0, "frames": 0}
        self.lat = {"conv": [], "all": []}
        self.lat_ts, self.lat_worker = [], []
        sse_at = {}  # (run, seq) -> first receive time on a /v1/events stream
        self.incomplete = []
        for kind, conv, path, events, error, ended, bad, status, head in self.got:
            mine = {r: v for r, v in runs.items() if kind == "all" or v[0] == conv}
            got, last_run_idx, lost = {}, -1, 0
            for run, seq, _done, t, stamp, tsn in events:
                c["frames"] += 1
                if run not in mine:
                    c["extra"] += 1
                    continue
                lst = got.setdefault(run, [])
                if (lst and seq <= lst[-1]) or (kind == "conv" and mine[run][1] < last_run_idx):
                    c["disorder"] += 1
                lst.append(seq)
                last_run_idx = max(last_run_idx, mine[run][1])
                if head is None or tsn < head:
                    continue  # stored before the stream was there: a catch-up, not a latency
                if stamp:
                    self.lat[kind].append(t - stamp)
                    self.lat_worker.append(tsn - stamp)
                self.lat_ts.append(t - tsn)
                if kind == "all":
                    sse_at.setdefault((run, seq), t)
            for run, (_, _, seqs) in mine.items():
                g = got.get(run, [])
                c["dup"] += len(g) - len(set(g))
                c["extra"] += len(set(g) - set(seqs))
                miss = len(set(seqs) - set(g))
                lost += miss
            c["lost"] += lost
            if lost or error or ended or bad:
                self.incomplete.append((path, lost, error, ended, bad, status,
                                        {r: (len(g), g[-1] if g else None) for r, g in got.items()}))
        self.counts = c
        self.cli_lat, self.cli_vs_sse = [], []
        self.direct_lat = [t - stamp for _, _, t, stamp in (self.direct or ([], 0))[0] if stamp]
        if self.cli:
            for run, seq, t, stamp in self.cli[0]:
                if stamp:
                    self.cli_lat.append(t - stamp)
                if (run, seq) in sse_at:
                    self.cli_vs_sse.append(sse_at[(run, seq)] - t)

    def report(self):
        a, c = self.a, self.counts
        out = []
        say = out.append
        say(f"serve-bench {a.label}: {a.runs} conversations x {a.turns} turns at once, "
            f"{a.deltas} deltas {a.delay_ms} ms apart a turn; {a.runs * a.per_conv} conversation "
            f"followers ({a.per_conv} each) + {a.all} /v1/events followers in {a.procs} "
            f"processes{'' if a.no_cli else ', 1 baton run --json turn beside them'}")
        wall = self.t1 - self.t0
        say(f"  load: {wall:.1f} s from the first POST to the last turn.completed; "
            f"{self.stored} events stored in {self.n_runs} runs ({self.stored / wall:.0f}/s), "
            f"{c['frames']} frames received ({c['frames'] / wall:.0f}/s)")
        say(f"  requests: " + ", ".join(f"{k}: {v}" for k, v in sorted(self.requests.items())))
        say(f"  turn.completed statuses: {self.statuses}; runs not completed whole in the "
            f"store: {self.bad_runs}")
        for k, v in self.request_ms.items():
            v = sorted(v)
            if v:
                say(f"  {k} request (POST to its answer, worker started): p50 {pct(v, 50):.1f} ms, "
                    f"max {v[-1]:.1f} ms")
        say(f"  events lost: {c['lost']}, duplicated: {c['dup']}, out of order: {c['disorder']}, "
            f"unexpected: {c['extra']}; streams complete: "
            f"{len(self.got) - len(self.incomplete)} of {len(self.got)}")
        for path, lost, error, ended, bad, status, got in self.incomplete[:5]:
            say(f"    {path}: {lost} lost, error {error}, ended early {ended}, bad frames {bad}, "
                f"HTTP {status}, got {got}")

        def line(name, v):
            v = sorted(v)
            if v:
                say(f"  {name}: p50 {us(pct(v, 50))}, p99 {us(pct(v, 99))}, max {us(v[-1])} "
                    f"({len(v)} events)")
            return v
        both = line("latency coder line -> SSE frame received (all followers)",
                    self.lat["conv"] + self.lat["all"])
        line("  conversation followers", self.lat["conv"])
        line("  /v1/events followers", self.lat["all"])
        line("latency event ts -> SSE frame received (ts: ms, truncated: +0..1 ms)", self.lat_ts)
        line("worker: coder line -> event ts (ms, truncated: -1..0 ms)", self.lat_worker)
        cli = line("beside it: coder line -> baton run --json stdout", self.cli_lat)
        ref = line("reference beside it: coder line -> its reader, directly (pipe)",
                   self.direct_lat)
        if both and ref:
            say(f"  added by baton (SSE p50, p99 minus the reference's): "
                f"{us(pct(both, 50) - pct(ref, 50))}, {us(pct(both, 99) - pct(ref, 99))}")
        line("same events: baton run's stdout -> a /v1/events follower", self.cli_vs_sse)
        s = self.sampler
        hwm = max((x[2] for x in s.samples), default=0)
        rss = max((x[1] for x in s.samples), default=0)
        cpu, cwall, peak = s.cpu_between(self.t0, self.t1)
        ncpu = os.cpu_count() or 1
        busy = (self.busy1[0] - self.busy0[0]) / max(1, self.busy1[1] - self.busy0[1]) * ncpu
        own = resource.getrusage(resource.RUSAGE_SELF)
        say(f"  baton-serve RSS: peak VmHWM {hwm / 1024:.1f} MiB, peak VmRSS {rss / 1024:.1f} MiB "
            f"(idle before the load {self.idle_rss / 1024:.1f}, after it {self.end_rss / 1024:.1f})")
        say(f"  baton-serve CPU: {cpu:.2f} s in {cwall:.1f} s = {cpu / max(cwall, 1e-9) * 100:.0f}% "
            f"of one core (busiest second {peak * 100:.0f}%)")
        say(f"  the machine: {busy * 100:.0f}% of one core busy over the load ({ncpu} cores: "
            f"workers, fake coders, serve, this client); the followers' own CPU "
            f"{self.client_cpu:.1f} s, this driver's {own.ru_utime + own.ru_stime:.1f} s")
        for n in self.notes[:20]:
            say(f"  note: {n}")
        err = Path(self.dir, "serve.err").read_text(errors="replace").splitlines()
        err = [ln for ln in err if "listening on" not in ln]
        if err:
            say(f"  baton serve's stderr: {len(err)} lines; last: {err[-3:]}")
        wl = Path(self.home, "worker.log")
        if wl.exists() and wl.stat().st_size:
            say(f"  worker.log: {wl.stat().st_size} bytes; last: "
                f"{wl.read_text(errors='replace').splitlines()[-2:]}")
        print("\n".join(out), flush=True)
        if a.tsv:
            f = {"lost": c["lost"], "dup": c["dup"], "disorder": c["disorder"],
                 "extra": c["extra"], "streams": len(self.got),
                 "complete": len(self.got) - len(self.incomplete),
                 "p50": pct(both, 50), "p99": pct(both, 99), "max": both[-1] if both else None,
                 "cli_p50": pct(cli, 50), "cli_p99": pct(cli, 99),
                 "ref_p50": pct(ref, 50), "ref_p99": pct(ref, 99),
                 "hwm_kib": hwm, "cpu_pct": round(cpu / max(cwall, 1e-9) * 100, 1),
                 "cpu_peak_pct": round(peak * 100, 1), "events": self.stored,
                 "runs": self.n_runs, "wall_s": round(wall, 1), "machine_pct": round(busy * 100)}
            with open(a.tsv, "a") as fh:
                for k, v in f.items():
                    fh.write(f"{a.label}\t{k}\t{'' if v is None else v}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baton", default=str(TOP / "build/baton"))
    ap.add_argument("--fake", default=str(TOP / "build/tests/fake-coder/fake-coder"))
    ap.add_argument("--fixture", default=str(TOP / "fixtures/codex/0.171.0/text.jsonl"))
    ap.add_argument("--runs", type=int, default=20, help="conversations, turns at once")
    ap.add_argument("--turns", type=int, default=3, help="turns of each conversation")
    ap.add_argument("--per-conv", type=int, default=5, help="followers of each conversation")
    ap.add_argument("--all", type=int, default=3, help="/v1/events followers")
    ap.add_argument("--deltas", type=int, default=200, help="answer deltas a turn")
    ap.add_argument("--delay-ms", type=int, default=10, help="between the coder's lines")
    ap.add_argument("--procs", type=int, default=2, help="follower processes")
    ap.add_argument("--timeout", type=float, default=120, help="s for every turn to end")
    ap.add_argument("--grace", type=float, default=5, help="s for followers to catch up")
    ap.add_argument("--no-cli", action="store_true", help="no baton run turn beside")
    ap.add_argument("--scratch", default=None, help="parent of the scratch directory")
    ap.add_argument("--keep", action="store_true", help="keep the scratch directory")
    ap.add_argument("--label", default="serve")
    ap.add_argument("--tsv", default=None, help="append label, key, value lines here")
    a = ap.parse_args()
    if min(a.runs, a.turns, a.procs, a.deltas) < 1 or a.per_conv < 0 or a.all < 0:
        ap.error("--runs, --turns, --procs and --deltas take 1 or more")
    if a.runs * a.per_conv + a.all + 1 + a.runs > 250:
        ap.error("more connections than baton serve takes (256)")
    for what, path in (("baton", a.baton), ("the fake coder", a.fake)):
        if not os.access(path, os.X_OK):
            print(f"failed: {what} is not built: {path}", file=sys.stderr)
            return 1
    b = Bench(a)
    try:
        b.run()
    except (RuntimeError, OSError) as e:
        print(f"failed: {e}", flush=True)
        return 1
    finally:
        if getattr(b, "proc", None) and b.proc.poll() is None:
            b.proc.kill()
            b.proc.wait()
    b.check()
    b.report()
    if a.keep:
        print(f"  kept {b.dir}")
    else:
        shutil.rmtree(b.dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
