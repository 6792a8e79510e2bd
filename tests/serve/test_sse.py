#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""serve-sse: the event streams of `baton serve` (docs/api.md, "Event
streams").

Frames are parsed as the standard parses them (sse.py) and checked one
by one: the first is `retry: 1000`; an event is `id: RUN:SEQ` and one
`data:` line holding the event (valid under the event schema), with no
`event:` field. Every follower gets seq 1..n exactly once and in order:
several at once, one that disconnects mid-turn and comes back with
Last-Event-ID, one that joins after the end; `from` and `run`;
`follow=1` across turns and onto a retry; pings with a short --ping; /v1/events with two
conversations, and resumed (also from further back than one read of the
store, once no run is left to wake it); lines forged at a run's socket
path never reach a stream; the data is byte for byte what
`baton attach --json` prints for the same run; and serve killed with
SIGKILL mid-turn and started again: the run goes on in its worker and
the resumed stream loses nothing.
"""
import json
import os
import signal
import socket
import sqlite3
import threading
import time

import servetest
from servetest import EVENTS_PER_TURN, HELD_EVENTS, ServeCase

CONV = "/v1/conversations/{id}"
EVENTS = CONV + "/events"


class Checks:
    """Frame checks shared by the test classes (self is a ServeCase)."""

    def open(self, target, headers=None, client=None):
        s = (client or self.client).stream(target, headers)
        self.addCleanup(s.close)
        tmpl = "/v1/events" if target.startswith("/v1/events") else EVENTS
        self.api.check(s.response, "GET", tmpl, 200)
        first = s.next_block(10)
        self.assertIsNotNone(first, "the stream ended before its first frame")
        self.assertEqual(first.retry, "1000", f"the first frame is not retry: 1000: {first}")
        self.assertIsNone(first.data, first)
        return s

    def event(self, s, run=None, seq=None, timeout=20):
        """The next event of stream s, checked; (event object, raw data)."""
        b = s.next_event(timeout)
        self.assertIsNotNone(b, f"the stream ended; expected {run}:{seq}")
        self.assertEqual(len(b.values("data")), 1, f"an event is one data line: {b}")
        self.assertIsNone(b.event, b)
        ev = json.loads(b.data)
        self.api.assert_valid(ev, "#/components/schemas/Event", "event data")
        self.assertEqual(b.id, f"{ev['run']}:{ev['seq']}")
        if run is not None:
            self.assertEqual(ev["run"], run, b)
        if seq is not None:
            self.assertEqual(ev["seq"], seq, f"expected seq {seq}: {b}")
        return ev, b.data

    def turn(self, s, run=None, first=1):
        """Events first.. of one turn up to its turn.completed; their raw
        data."""
        raw = []
        seq = first
        while True:
            ev, data = self.event(s, run, seq)
            run = ev["run"]
            raw.append(data)
            if ev["type"] == "turn.completed":
                return raw
            self.assertLess(seq, 100, "no turn.completed")
            seq += 1


class Streams(ServeCase, Checks):
    home_name = "sse"

    def test_followers_and_last_event_id(self):
        self.home.gate.hold()
        conv, run = self.create("followed")
        r = run
        url = f"/v1/conversations/{conv}/events"
        f1, f2, f3 = self.open(url), self.open(url), self.open(url + "?from=1")
        for seq in range(1, 4):
            self.event(f3, r, seq)
        f3.close()  # gone mid-turn, after seq 3
        got1 = [self.event(f1, r, seq)[1] for seq in range(1, HELD_EVENTS + 1)]
        self.home.gate.release()
        got1 += self.turn(f1, r, HELD_EVENTS + 1)
        f1.expect_end()
        got2 = self.turn(f2, r)
        f2.expect_end()
        self.assertEqual(got1, got2)
        self.assertEqual(len(got1), EVENTS_PER_TURN)
        # back with Last-Event-ID, which wins over from
        f3 = self.open(url + "?from=1", [("Last-Event-ID", f"{r}:3")])
        self.assertEqual(self.turn(f3, r, 4), got1[3:])
        f3.expect_end()
        # ?after= for a first connection, over from too
        f5 = self.open(f"{url}?from=2&after={r}:6")
        self.assertEqual(self.turn(f5, r, 7), got1[6:])
        f5.expect_end()
        # after the last event: nothing more, and the stream ends
        f4 = self.open(url, [("Last-Event-ID", f"{r}:{EVENTS_PER_TURN}")])
        f4.expect_end()
        # the CLI's --json lines of the same run, byte for byte
        self.assertEqual(self.home.attach_lines(conv), got1)

    def test_from_and_run(self):
        conv, run1 = self.create("two turns")
        self.idle(conv)
        run2 = self.send(conv, "the second")["run"]
        self.idle(conv)
        url = f"/v1/conversations/{conv}/events"
        whole2 = self.turn(self.open(url), run2)  # the last turn by default
        s = self.open(url + "?from=5")
        self.assertEqual(self.turn(s, run2, 5), whole2[4:])
        s.expect_end()
        s = self.open(f"{url}?run={run1}")
        whole1 = self.turn(s, run1)
        s.expect_end()
        self.assertEqual(len(whole1), EVENTS_PER_TURN)
        s = self.open(f"{url}?run={run1}&from={EVENTS_PER_TURN}")
        self.assertEqual(self.turn(s, run1, EVENTS_PER_TURN), whole1[-1:])
        s.expect_end()
        other, other_run = self.create("another conversation")
        self.idle(other)
        for q, status, kind in (("from=0", 400, "bad_request"), ("from=x", 400, "bad_request"),
                                ("from=-1", 400, "bad_request"), ("follow=2", 400, "bad_request"),
                                (f"run={servetest.NATIVE_ID}", 404, "not_found"),  # not an id
                                ("run=0mx66kzscsm2vv13gfc3ti", 404, "not_found"),
                                (f"run={other_run}", 404, "not_found")):
            with self.subTest(query=q):
                s = self.client.stream(f"{url}?{q}")
                self.api.check_error(s.response, status, kind, "GET", EVENTS)
        # the largest seq has no next one (it wrapped round to a replay
        # from seq 1); one past it is out of range
        big = f"{run1}:{2**63 - 1}"
        for q, status, kind in (("after=x", 400, "bad_request"), (f"after={big}", 400,
                                "bad_request"), (f"after={run1}:{2**63}", 400, "bad_request"),
                                (f"after={other_run}:1", 404, "not_found")):
            with self.subTest(query=q):
                s = self.client.stream(f"{url}?{q}")
                self.api.check_error(s.response, status, kind, "GET", EVENTS)
        for lei, status, kind in (("not an id", 400, "bad_request"), (big, 400, "bad_request"),
                                  (f"{other_run}:1", 404, "not_found")):
            with self.subTest(last_event_id=lei):
                s = self.client.stream(url, [("Last-Event-ID", lei)])
                self.api.check_error(s.response, status, kind, "GET", EVENTS)

    def test_follow_across_turns(self):
        conv, run1 = self.create("followed for ever")
        self.idle(conv)
        s = self.open(f"/v1/conversations/{conv}/events?follow=1")
        self.turn(s, run1)
        s.expect_quiet(0.5)
        run2 = self.send(conv, "turn two")["run"]
        self.assertEqual(len(self.turn(s, run2)), EVENTS_PER_TURN)
        self.home.gate.hold()
        run3 = self.send(conv, "turn three")["run"]
        for seq in range(1, HELD_EVENTS + 1):
            self.event(s, run3, seq)
        self.home.gate.release()
        self.turn(s, run3, HELD_EVENTS + 1)
        s.expect_quiet(1.0)  # waits for the next turn: open, no event

    def test_follow_across_retry(self):
        # a retry is another run of the same turn: the follower goes on to it
        conv, run1 = self.create("cancel and retry me")
        self.idle(conv)
        s = self.open(f"/v1/conversations/{conv}/events?follow=1")
        self.turn(s, run1)
        self.home.gate.hold()
        run2 = self.send(conv, "turn two")["run"]
        self.held(conv, run2)
        self.call("POST", f"/v1/conversations/{conv}/cancel", CONV + "/cancel", 202)
        ended = self.turn(s, run2)
        self.assertEqual(json.loads(ended[-1])["status"], "cancelled")
        self.home.gate.release()
        # turn.completed can be committed before the run's end state (a
        # batch of events goes out before the worker's last write): a
        # retry sent at once may find the run still busy (409), so wait
        self.idle(conv)
        _, doc = self.call("POST", f"/v1/conversations/{conv}/retry", CONV + "/retry", 202)
        retry = doc["run"]
        self.assertEqual(self.run_of(conv, retry)["turn"], self.run_of(conv, run2)["turn"])
        self.assertEqual(len(self.turn(s, retry)), EVENTS_PER_TURN)
        s.expect_quiet(0.5)

    def test_all_events_of_two_conversations(self):
        s = self.open("/v1/events")
        a, ra = self.create("dashboard one")
        b, rb = self.create("dashboard two")
        seen = []  # (run, seq, data) in stream order
        done = set()
        deadline = time.monotonic() + 30
        while done != {ra, rb}:
            ev, data = self.event(s, timeout=max(0.1, deadline - time.monotonic()))
            seen.append((ev["run"], ev["seq"], data))
            self.assertIn(ev["conversation"], (a, b))
            if ev["type"] == "turn.completed":
                done.add(ev["run"])
        for conv, r in ((a, ra), (b, rb)):
            own = [(seq, data) for run, seq, data in seen if run == r]
            self.assertEqual([seq for seq, _ in own], list(range(1, EVENTS_PER_TURN + 1)))
            self.assertEqual([data for _, data in own], self.home.attach_lines(conv))
        s.expect_quiet(0.3)
        # resumed after a's fifth event: the same events after it, in order
        at = seen.index(next(x for x in seen if x[:2] == (ra, 5)))
        s2 = self.open("/v1/events", [("Last-Event-ID", f"{ra}:5")])
        rest = [self.event(s2)[1] for _ in seen[at + 1:]]
        self.assertEqual(rest, [data for _, _, data in seen[at + 1:]])
        s2.expect_quiet(0.3)

    def test_unknown_conversation(self):
        s = self.client.stream("/v1/conversations/0mx66kzscsm2vv13gfc3ti/events")
        self.api.check_error(s.response, 404, "not_found", "GET", EVENTS)


class Pings(ServeCase, Checks):
    home_name = "ping"
    serve_args = ("--ping", "0.2")

    def pings(self, s, seconds):
        """(keepalive comments, ping frames) read in seconds."""
        comments = pings = 0
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                b = s.next_block(max(0.01, deadline - time.monotonic()))
            except TimeoutError:
                break
            self.assertIsNotNone(b, "the stream ended")
            comments += b.comments.count("keepalive")
            if b.is_ping():
                pings += 1
                self.assertIsNone(b.id, f"a ping must not move Last-Event-ID: {b}")
                data = json.loads(b.data)
                self.api.assert_valid(data, "#/components/schemas/Ping", "ping data")
            elif b.is_event():
                self.fail(f"no event was expected: {b}")
        return comments, pings

    def test_pings_on_both_streams(self):
        conv, _ = self.create("pinged")
        self.idle(conv)
        s = self.open("/v1/events")
        comments, pings = self.pings(s, 1.6)
        self.assertGreaterEqual(comments, 4)
        self.assertGreaterEqual(pings, 4)
        self.assertLessEqual(pings, 12)  # every 0.2 s, not as fast as it can
        s = self.open(f"/v1/conversations/{conv}/events?follow=1")
        self.turn(s)
        comments, pings = self.pings(s, 1.6)
        self.assertGreaterEqual(comments, 4)
        self.assertGreaterEqual(pings, 4)

    def test_bad_ping_refused(self):
        for value in ("0", "31", "-1", "x", ""):  # up to 30 s (docs/api.md, "Limits")
            with self.subTest(ping=value):
                p = self.home.baton("serve", "--listen", "127.0.0.1:0", "--ping", value,
                                    check=False, timeout=10)
                self.assertEqual(p.returncode, 2, p)
                self.assertIn(b"--ping", p.stderr)
                self.assertEqual(p.stdout, b"")


class KilledServe(ServeCase, Checks):
    """serve killed with SIGKILL mid-turn, then started again on the same
    home: the run went on in its worker, and the resumed stream has every
    event once."""

    home_name = "killed"

    def test_killed_mid_turn(self):
        self.home.gate.hold()
        conv, run = self.create("outlive the server")
        r = run
        s = self.open(f"/v1/conversations/{conv}/events")
        before = [self.event(s, r, seq)[1] for seq in range(1, HELD_EVENTS + 1)]
        token, port = self.serve.token, self.serve.port
        self.serve.kill_group()
        try:
            self.assertIsNone(s.next_block(5), "an event from a killed server")
        except TimeoutError:
            self.fail("the stream stays open after serve was killed: another process holds "
                      "its connection (a descriptor leaked into a worker)")
        with self.assertRaises(ConnectionRefusedError, msg="another process holds serve's "
                               "listening socket (a descriptor leaked into a worker)"):
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
        (c,) = [c for c in self.home.ls() if c["id"] == conv]
        self.assertEqual(c["last_run_state"], "running", "the worker went with the server")
        again = self.home.serve()
        self.assertEqual(again.token, token, "the token is kept in serve.token")
        client = again.client()
        s = self.open(f"/v1/conversations/{conv}/events", [("Last-Event-ID", f"{r}:3")],
                      client=client)
        after = [self.event(s, r, seq)[1] for seq in (4, 5)]
        self.assertEqual(after, before[3:])
        self.home.gate.release()
        after += self.turn(s, r, HELD_EVENTS + 1)
        s.expect_end()
        whole = before + after[2:]
        self.assertEqual([json.loads(d)["seq"] for d in whole],
                         list(range(1, EVENTS_PER_TURN + 1)))
        self.assertEqual(json.loads(whole[-1])["status"], "completed")
        self.assertEqual(whole, self.home.attach_lines(conv))
        r2 = client.get(f"/v1/conversations/{conv}")
        d = self.api.check(r2, "GET", "/v1/conversations/{id}", 200)
        self.assertEqual(d["runs"][0]["state"], "completed")
        self.assertEqual(d["messages"][-1]["text"], servetest.ANSWER)

    def test_dead_worker(self):
        """A worker killed mid-turn (SIGKILL; serve and the coder left
        alone): serve recovers the run as every CLI command would, its
        follower gets the closing turn.completed, interrupted, and the
        conversation takes the next prompt at once (no 409 busy, nothing
        queued behind a run no one runs)."""
        self.home.gate.hold()
        conv, run = self.create("a worker that dies")
        s = self.open(f"/v1/conversations/{conv}/events")
        for seq in range(1, HELD_EVENTS + 1):
            self.event(s, run, seq)
        db = sqlite3.connect(os.path.join(self.home.home, "baton.db"))
        try:
            (pid,) = db.execute("SELECT owner_pid FROM runs WHERE id = ?", (run,)).fetchone()
        finally:
            db.close()
        os.kill(pid, signal.SIGKILL)
        seq, ev = HELD_EVENTS, {}
        while ev.get("type") != "turn.completed":
            seq += 1
            self.assertLess(seq, 100, "no turn.completed")
            ev, _ = self.event(s, run, seq, timeout=10)
        self.assertEqual(ev["status"], "interrupted", ev)
        s.expect_end()
        d = self.detail(conv)
        self.assertEqual(d["runs"][0]["state"], "interrupted")
        self.assertIsNone(d["running"])
        self.home.gate.release()
        doc = self.send(conv, "after the crash")
        self.assertEqual(doc["state"], "started", doc)
        self.assertEqual(self.idle(conv)["runs"][-1]["state"], "completed")

    def test_deleted_conversation_ends_its_stream(self):
        """A stream waiting on a conversation that is then deleted (with
        baton rm, behind serve's back) ends instead of pinging for ever."""
        conv, run = self.create("soon gone")
        self.idle(conv)
        s = self.open(f"/v1/conversations/{conv}/events?follow=1")
        self.turn(s, run)
        self.home.baton("rm", "-y", conv)
        s.expect_end(10)


class ReplayCase(ServeCase, Checks):
    """A case whose fake coder replays the fixture as edit() makes it: a
    file in the scratch root, made once for the class."""

    @staticmethod
    def edit(lines):
        return lines

    @classmethod
    def setUpClass(cls):
        with open(servetest.FIXTURE) as f:
            lines = cls.edit([ln.rstrip("\n") for ln in f])
        cls.replay = os.path.join(servetest.TMP_ROOT, f"sse-{cls.home_name}-{os.getpid()}.jsonl")
        with open(cls.replay, "w") as f:
            f.write("\n".join(lines) + "\n")
        cls.home_env = {"FAKE_CODER_REPLAY": cls.replay}
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        os.unlink(cls.replay)


class LongLine(ReplayCase):
    """An event too long for a run's tap to keep, the last before the
    coder waits: a follower gets it from the store at once, not when the
    coder writes again (the tap forgets what it kept, so the stream's
    cursor is no longer up to date with it)."""

    home_name = "long-line"

    @staticmethod
    def edit(lines):
        """The delta before the fake's pause made longer than what a tap
        keeps (BT_SERVE_TAP_BYTES, 4 MiB)."""
        m = json.loads(lines[servetest.PAUSE_AFTER - 1])
        assert m["method"] == "item/agentMessage/delta", m
        m["params"]["delta"] = "x" * (5 << 20)
        lines[servetest.PAUSE_AFTER - 1] = json.dumps(m)
        return lines

    def test_long_event_while_the_coder_waits(self):
        self.home.gate.hold()
        conv, run = self.create("a long answer")
        s = self.open(f"/v1/conversations/{conv}/events")
        for seq in range(1, HELD_EVENTS):
            self.event(s, run, seq)
        ev, _ = self.event(s, run, HELD_EVENTS, timeout=20)  # the coder still waits
        self.assertEqual(ev["type"], "item.delta")
        self.assertEqual(len(ev["text"]), 5 << 20)
        self.home.gate.release()
        self.turn(s, run, HELD_EVENTS + 1)
        s.expect_end()


class LongCatchUp(ReplayCase):
    """A /v1/events stream resumed further back than one read of the
    store gives (256 events or 64 KiB) once every run has ended: no
    channel is left to wake it, and it still gets every event after the
    one named, to the end (it stopped after the first read)."""

    home_name = "sse-catch-up"
    DELTAS = 300

    @staticmethod
    def edit(lines):
        """The answer as DELTAS deltas."""
        delta = next(ln for ln in lines if '"item/agentMessage/delta"' in ln)
        out = []
        for ln in lines:
            out.extend([delta] * LongCatchUp.DELTAS if ln == delta else
                       [] if '"item/agentMessage/delta"' in ln else [ln])
        return out

    def test_resume_past_one_read(self):
        conv, run = self.create("a long answer")
        self.idle(conv)
        s = self.open("/v1/events", [("Last-Event-ID", f"{run}:1")])
        seq = 2
        while self.event(s, run, seq, timeout=10)[0]["type"] != "turn.completed":
            seq += 1
        self.assertGreater(seq, self.DELTAS)
        s.expect_quiet(0.3)


class ForeignOwner(ServeCase, Checks):
    """What answers at a run's socket path is not its owner (a link to
    another run's socket, or a process that answers and then says
    nothing): the run's stream still gets its own events, and while the
    coder is still running. The fake coder waits at the gate after event
    5, then writes events 6 and 7 and hangs (FAKE_CODER_HANG_AFTER), so
    the run only ends when it is cancelled."""

    home_name = "foreign-owner"
    home_env = {"FAKE_CODER_HANG_AFTER": str(servetest.PAUSE_AFTER + 2)}
    serve_args = ("--ping", "30")  # a ping wakes every stream: none before the checks end

    def socket_path(self, run):
        return os.path.join(self.home.home, "channels", f"{run}.sock")

    def wait_socket(self, run):
        servetest.wait_for(lambda: os.path.exists(self.socket_path(run)), 30,
                           f"the owner of {run} to listen")

    def cancel(self, conv):
        self.call("POST", f"/v1/conversations/{conv}/cancel", CONV + "/cancel", 202)

    def own_events(self, s, run, first, last):
        for seq in range(first, last + 1):
            ev, _ = self.event(s, run, seq, timeout=10)
            self.assertEqual(ev["run"], run, f"{run}:{seq} carries another run's event")

    def test_link_to_another_owner(self):
        self.home.gate.hold()
        conv_a, run_a = self.create("the one followed")
        conv_b, run_b = self.create("the other")
        self.wait_socket(run_a)
        self.wait_socket(run_b)
        os.unlink(self.socket_path(run_a))
        os.symlink(self.socket_path(run_b), self.socket_path(run_a))
        s = self.open(f"/v1/conversations/{conv_a}/events")
        self.own_events(s, run_a, 1, HELD_EVENTS)
        self.home.gate.release()
        self.own_events(s, run_a, HELD_EVENTS + 1, HELD_EVENTS + 2)  # the coder hangs
        self.cancel(conv_a)
        self.cancel(conv_b)

    def test_forged_rowids(self):
        """What answers at run X's path says it is X's owner, then sends
        lines of X with the rowids that run B's next events will take:
        /v1/events takes rowids only from the run's owner (its pid), so
        B's events all come and no forged one does."""
        self.home.gate.hold()
        conv_x, run_x = self.create("its socket taken over")
        self.wait_socket(run_x)
        self.held(conv_x, run_x)
        os.unlink(self.socket_path(run_x))
        s = self.open("/v1/events")
        conv_b, run_b = self.create("the other")
        got = []

        def read_until(pred, what):
            deadline = time.monotonic() + 20
            while not pred():
                self.assertLess(time.monotonic(), deadline, f"{what}; got {got}")
                ev, _ = self.event(s, timeout=max(0.1, deadline - time.monotonic()))
                got.append((ev["run"], ev["seq"]))
        read_until(lambda: (run_b, HELD_EVENTS) in got, "b's held events")
        forger = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.addCleanup(forger.close)
        # listening before it is at the path: serve follows x there at once
        forger.bind(self.socket_path(run_x) + ".new")
        forger.listen(8)
        os.rename(self.socket_path(run_x) + ".new", self.socket_path(run_x))
        forger.settimeout(20)
        c, _ = forger.accept()
        self.addCleanup(c.close)
        c.recv(4096)
        db = sqlite3.connect(os.path.join(self.home.home, "baton.db"))
        last = db.execute("SELECT max(rowid) FROM events").fetchone()[0]
        db.close()
        lines = [{"op": "following", "run": run_x}]
        for k in range(1, 4):
            lines.append({"op": "rowid", "from": last + k})
            lines.append({"type": "item.delta", "run": run_x, "conversation": conv_x,
                          "seq": 100 + k, "ts": "2026-12-07T00:00:00.000Z",
                          "item_id": "forged", "text": "FORGED"})
        c.sendall(b"".join(json.dumps(x, separators=(",", ":")).encode() + b"\n"
                           for x in lines))
        time.sleep(0.3)  # serve has read them
        self.home.gate.release()
        after = HELD_EVENTS + 2  # the coder hangs after two more
        read_until(lambda: (run_b, after) in got and (run_x, after) in got,
                   "the events after the gate")
        self.assertEqual([q for r, q in got if r == run_b], list(range(1, after + 1)))
        self.assertEqual([q for r, q in got if r == run_x], [HELD_EVENTS + 1, after])
        s.expect_quiet(0.3)
        self.cancel(conv_x)
        self.cancel(conv_b)

    def test_silent_answer(self):
        self.home.gate.hold()
        conv, run = self.create("followed through a mute socket")
        self.wait_socket(run)
        os.unlink(self.socket_path(run))
        mute = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.addCleanup(mute.close)
        mute.bind(self.socket_path(run))
        mute.listen(8)
        held = []

        def answer():  # "following", for the right run, then nothing
            try:
                while True:
                    c, _ = mute.accept()
                    held.append(c)
                    c.recv(4096)
                    c.sendall(json.dumps({"op": "following", "run": run}).encode() + b"\n")
            except OSError:
                pass
        threading.Thread(target=answer, daemon=True).start()
        s = self.open(f"/v1/conversations/{conv}/events")
        self.own_events(s, run, 1, HELD_EVENTS)
        servetest.wait_for(lambda: held, 30, "serve to follow the mute socket")
        self.home.gate.release()
        self.own_events(s, run, HELD_EVENTS + 1, HELD_EVENTS + 2)  # the coder hangs
        self.cancel(conv)
        for c in held:
            c.close()


if __name__ == "__main__":
    servetest.main()
