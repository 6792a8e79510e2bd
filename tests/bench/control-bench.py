#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""control-bench: a control request to a running turn, until the coder has
it (docs/performance.md, "Control requests").

A scratch BATON_HOME, the fake coder as codex replaying
fixtures/codex/0.171.0/interrupt.jsonl, its answer's first delta written
again every --repeat-ms (FAKE_CODER_REPEAT) until baton writes to it: a
turn that runs until it is interrupted. Each sample is one detached turn
(`baton run --detach`); once its owner listens on its channel and the
coder streams, a cancel is requested, and the fake coder logs the line it
then reads (turn/interrupt) with CLOCK_REALTIME in ns
(FAKE_CODER_LOG_STDIN_NS). Two ways, alternating:

  - store: this process does what `baton cancel` does in the store (the
    run's cancel_ms and a `cancel` row in `controls`, one transaction),
    then wakes the owner on its socket; the time runs from just before
    the transaction. This is what baton adds between a request and the
    coder: the commit, the wake, the owner's read and its write.
  - cli: `baton cancel CONV` run as a process, from just before its
    spawn: the same plus the command's own start (exec, the store open).

Figures only: nothing is asserted; exit 0 unless an argument is wrong or a
turn does not start ("failed: ...", exit 1). --tsv FILE appends
label<TAB>key<TAB>value lines for bench.sh's summary.
"""
import argparse
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TOP = Path(__file__).resolve().parents[2]


def pct(values, p):
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100.0 * (len(v) - 1))))]


def wait_for(cond, timeout, what):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = cond()
        if got:
            return got
        time.sleep(0.002)
    raise RuntimeError(f"timed out waiting for {what}")


class Bench:
    def __init__(self, a, scratch):
        self.a = a
        self.home = scratch / "home"
        self.work = scratch / "work"
        self.work.mkdir()
        self.logs = scratch / "logs"
        self.logs.mkdir()
        self.env = dict(os.environ)
        self.env.update({
            "BATON_HOME": str(self.home),
            "BATON_CODEX_BIN": a.fake,
            "FAKE_CODER_REPLAY": a.fixture,
            "FAKE_CODER_REPEAT": "12",
            "FAKE_CODER_DELAY_MS": str(a.repeat_ms),
            "FAKE_CODER_LOG_STDIN_NS": "1",
            "NO_COLOR": "1",
        })
        self.db = None

    def baton(self, *args, env=None):
        return subprocess.run([self.a.baton, *args], cwd=self.work, env=env or self.env,
                              capture_output=True, text=True, timeout=60)

    def store(self):
        if self.db is None:
            self.db = sqlite3.connect(str(self.home / "baton.db"), timeout=10,
                                      isolation_level=None)
            # as baton's own connections (src/store-open.c): no fsync a commit
            self.db.execute("PRAGMA synchronous=NORMAL")
        return self.db

    def start_turn(self, n):
        log = self.logs / f"stdin-{n}.log"
        env = dict(self.env, FAKE_CODER_LOG_STDIN=str(log))
        r = self.baton("run", "--detach", f"sample {n}", env=env)
        if r.returncode != 0:
            raise RuntimeError(f"baton run --detach: {r.stderr.strip()}")
        conv = r.stdout.split()[0]
        db = self.store()

        def streaming():
            # three deltas: the fake coder is in its repeat, polling its
            # stdin (before the second it sleeps between lines)
            row = db.execute("SELECT r.id FROM runs r WHERE r.conversation = ? AND"
                             " r.state = 'running' AND (SELECT count(*) FROM events e WHERE"
                             " e.run = r.id AND e.type = 'item.delta') >= 3",
                             (conv,)).fetchone()
            if row and (self.home / "channels" / f"{row[0]}.sock").exists():
                return row[0]
            return None
        run = wait_for(streaming, 30, "the turn to stream with its channel")
        time.sleep(self.a.repeat_ms / 2000.0)  # mid-way between two repeats
        return conv, run, log

    def cancel_in_store(self, conv, run):
        """What bt_store_run_cancel and bt_service_control_wake do."""
        db = self.store()
        t0 = time.time_ns()
        now = t0 // 1000000
        db.execute("BEGIN IMMEDIATE")
        db.execute("UPDATE runs SET cancel_ms = coalesce(cancel_ms, ?) WHERE id = ?", (now, run))
        db.execute("INSERT INTO controls (conversation, run, kind, body, created_ms)"
                   " VALUES (?, ?, 'cancel', '{}', ?)", (conv, run, now))
        db.execute("COMMIT")
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(str(self.home / "channels" / f"{run}.sock"))
            s.sendall(b'{"op":"wake"}\n')
        finally:
            s.close()
        return t0

    def cancel_cli(self, conv):
        t0 = time.time_ns()
        p = subprocess.Popen([self.a.baton, "cancel", conv], cwd=self.work, env=self.env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return t0, p

    @staticmethod
    def received(log):
        """When the fake coder read turn/interrupt (ns), or None."""
        try:
            text = log.read_text()
        except FileNotFoundError:
            return None
        for line in text.splitlines():
            stamp, _, rest = line.partition(" ")
            if '"turn/interrupt"' in rest:
                return int(stamp)
        return None

    def wait_ended(self, run):
        db = self.store()
        wait_for(lambda: db.execute("SELECT state != 'running' FROM runs WHERE id = ?",
                                    (run,)).fetchone()[0], 30, "the run to end")

    def sample(self, n, how):
        conv, run, log = self.start_turn(n)
        proc = None
        if how == "store":
            t0 = self.cancel_in_store(conv, run)
        else:
            t0, proc = self.cancel_cli(conv)
        t1 = wait_for(lambda: self.received(log), 30, "the coder to read turn/interrupt")
        self.wait_ended(run)
        if proc:
            proc.wait(timeout=30)
        return (t1 - t0) / 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--baton", default=str(TOP / "build/baton"))
    ap.add_argument("--fake", default=str(TOP / "build/tests/fake-coder/fake-coder"))
    ap.add_argument("--fixture", default=str(TOP / "fixtures/codex/0.171.0/interrupt.jsonl"))
    ap.add_argument("--samples", type=int, default=100, help="of each way")
    ap.add_argument("--repeat-ms", type=int, default=20, help="the coder's delta, again")
    ap.add_argument("--scratch", default=None, help="parent of the scratch directory")
    ap.add_argument("--keep", action="store_true", help="keep the scratch directory")
    ap.add_argument("--label", default="control")
    ap.add_argument("--tsv", default=None, help="append label, key, value lines here")
    a = ap.parse_args()
    if a.samples < 1:
        ap.error("--samples is 1 or more")
    scratch = Path(tempfile.mkdtemp(prefix="bt-control-", dir=a.scratch))
    times = {"store": [], "cli": []}
    try:
        b = Bench(a, scratch)
        for i in range(2 * a.samples):
            how = "store" if i % 2 == 0 else "cli"
            times[how].append(b.sample(i, how))
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        print(f"failed: {e}", file=sys.stderr)
        return 1
    finally:
        if not a.keep:
            shutil.rmtree(scratch, ignore_errors=True)
        else:
            print(f"kept {scratch}", file=sys.stderr)
    out = []
    for how, what in (("store", "request stored -> coder reads it"),
                      ("cli", "`baton cancel` spawned -> coder reads it")):
        v = times[how]
        line = (f"{what}: n {len(v)}, p50 {pct(v, 50):.2f} ms, p90 {pct(v, 90):.2f} ms, "
                f"p99 {pct(v, 99):.2f} ms, max {max(v):.2f} ms")
        print(line)
        out += [(f"{how}_p50_ms", pct(v, 50)), (f"{how}_p99_ms", pct(v, 99))]
    if a.tsv:
        with open(a.tsv, "a") as f:
            for k, v in out:
                f.write(f"{a.label}\t{k}\t{v:.3f}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
