#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""serve-live-codex: one real `baton serve` with the real codex CLI
(0.171.0, BATON_TEST_CODEX_BIN from tests/scripts/install-codex.sh)
against the local stand-in model (tests/standin), as the live C tests
run it (servetest.Home.use_codex).

A conversation is created and its stream followed to turn.completed
with the stand-in's answer in the message deltas; a slow turn ([[slow]]:
300 deltas 200 ms apart) is cancelled (turn.completed cancelled) and
retried; a follow-up sent while the retry streams is queued and runs as
the next turn once the retry completed (a queue waits after a cancelled
turn: only a completed one hands it on), every run resuming the same
codex thread (the stand-in sees the first turn's words in the last
request); search finds the conversation; delete takes it and
its codex session file, and it is 404 after. Followers (follow=1
ones, which go on from run to run in start order, a retry's run
included; the dashboard /v1/events; one for a single run) each get seq
1..n of every run they see exactly once, in order.

Without BATON_TEST_CODEX_BIN naming an executable the program prints
SKIPPED and exits 77 (ctest: Skipped, never Passed).
"""
import os
import sys
import time
import urllib.parse

import servetest
from servetest import ServeCase, wait_for
from test_sse import Checks

CONV = "/v1/conversations/{id}"
CODEX_BIN = os.environ.get("BATON_TEST_CODEX_BIN", "")
FIRST = "Say hello banana"
FIRST_ANSWER = f"Hello! You said: {FIRST}"
FOLLOW_UP = "And again, kumquat?"
SLOW = "[[slow]]"


class LiveCodex(ServeCase, Checks):
    home_name = "live-codex"
    codex_bin = CODEX_BIN

    def follow(self, s, run, upto=None):
        """Events of run on stream s from seq 1, each once and in order, up
        to turn.completed (or the first of type upto); the event objects."""
        evs = []
        while True:
            ev, _ = self.event(s, run, len(evs) + 1, timeout=60)
            evs.append(ev)
            if ev["type"] == "turn.completed" or ev["type"] == upto:
                return evs
            self.assertLess(len(evs), 2000, "no turn.completed")

    def rest(self, s, run, evs):
        """The events of run after evs, to its turn.completed."""
        while evs[-1]["type"] != "turn.completed":
            ev, _ = self.event(s, run, len(evs) + 1, timeout=60)
            evs.append(ev)
        return evs

    @staticmethod
    def said(evs):
        """The text of the message deltas of one turn."""
        return "".join(e["text"] for e in evs
                       if e["type"] == "item.delta" and e["item"]["kind"] == "message")

    def streaming(self, s, run):
        """Follow run until its first message delta (the slow answer
        streams); the events so far."""
        evs = []
        while not self.said(evs):
            ev, _ = self.event(s, run, len(evs) + 1, timeout=60)
            evs.append(ev)
            self.assertNotEqual(ev["type"], "turn.completed", f"run {run} ended: {ev}")
        return evs

    def completed(self, evs, status):
        end = evs[-1]
        self.assertEqual(end["type"], "turn.completed")
        self.assertEqual(end["status"], status, end)
        self.assertEqual(evs[0]["type"], "turn.started")
        return end

    def test_story(self):
        t0 = time.monotonic()
        dash = self.open("/v1/events")
        conv, run = self.create(FIRST, coder="codex")
        r1 = run
        url = f"/v1/conversations/{conv}/events"
        story = self.open(url + "?follow=1")
        once = self.open(url)
        # turn 1: the stand-in's answer in the deltas, on both followers
        evs = self.follow(once, r1)
        once.expect_end()
        self.assertEqual(self.follow(story, r1), evs)
        self.completed(evs, "completed")
        self.assertEqual(self.said(evs), FIRST_ANSWER)
        self.assertIn(FIRST, evs[-1]["final_text"])
        d = self.idle(conv)
        native = d["conversation"]["native_session_id"]
        self.assertTrue(native)
        self.assertEqual(d["runs"][0]["native_session_id"], native)
        self.assertEqual(d["runs"][0]["coder_version"], "0.171.0")
        self.assertEqual([(m["role"], m["text"]) for m in d["messages"]],
                         [("user", FIRST), ("assistant", FIRST_ANSWER)])
        print(f"turn 1: {time.monotonic() - t0:.1f} s", file=sys.stderr)

        # turn 2 streams slowly and is cancelled
        doc = self.send(conv, SLOW)
        self.assertEqual(doc["state"], "started")
        r2 = doc["run"]
        evs2 = self.streaming(story, r2)
        _, doc = self.call("POST", f"/v1/conversations/{conv}/cancel", CONV + "/cancel", 202)
        self.assertEqual(doc["run"], r2)
        self.completed(self.rest(story, r2, evs2), "cancelled")
        self.idle(conv)
        # retried: another run of turn 2; a follow-up sent while it streams
        # is queued and goes out after it completed, as turn 3
        _, doc = self.call("POST", f"/v1/conversations/{conv}/retry", CONV + "/retry", 202)
        self.assertEqual(doc["state"], "started")
        r3 = doc["run"]
        # follow=1 goes on with later runs in the order they started, a
        # retry among them; a stream of the retry alone follows on too
        again = self.open(f"{url}?run={r3}&follow=1")
        evs3 = self.streaming(again, r3)
        queued = self.send(conv, FOLLOW_UP)
        self.assertEqual(queued["state"], "queued", queued)
        d = self.detail(conv)
        self.assertEqual(d["running"], r3)
        self.assertEqual([q["text"] for q in d["queued"]], [FOLLOW_UP])
        evs3 = self.rest(again, r3, evs3)
        self.completed(evs3, "completed")
        self.assertTrue(evs3[0]["resumed"], evs3[0])
        self.assertIn("tick 300.", self.said(evs3))
        print(f"turn 2 twice: {time.monotonic() - t0:.1f} s", file=sys.stderr)
        r4 = self.next_run(conv, r3)
        evs4 = self.follow(again, r4)
        # the first follower: the retry, then turn 3
        self.assertEqual(self.follow(story, r3), evs3)
        self.assertEqual(self.follow(story, r4), evs4)
        self.completed(evs4, "completed")
        self.assertTrue(evs4[0]["resumed"], evs4[0])
        self.assertIn(FOLLOW_UP, self.said(evs4))
        d = self.idle(conv)
        self.assertEqual([(r["id"], r["turn"], r["state"]) for r in d["runs"]],
                         [(r1, 1, "completed"), (r2, 2, "cancelled"), (r3, 2, "completed"),
                          (r4, 3, "completed")])
        self.assertEqual({r["native_session_id"] for r in d["runs"]}, {native})
        self.assertEqual(d["conversation"]["native_session_id"], native)
        self.assertEqual(d["queued"], [])
        self.assertEqual([(m["role"], m["state"]) for m in d["messages"][-2:]],
                         [("user", "complete"), ("assistant", "complete")])
        last = self.home.standin.requests()[-1]  # codex sent the thread's history
        self.assertIn(FIRST, str(last))
        self.assertIn(FOLLOW_UP, str(last))
        self.error("POST", f"/v1/conversations/{conv}/retry", CONV + "/retry", 409, "conflict")
        self.error("POST", f"/v1/conversations/{conv}/cancel", CONV + "/cancel", 409,
                   "conflict")

        # the dashboard saw every run's events once, in order
        runs = [r1, r2, r3, r4]
        self.assertEqual(self.dashboard(dash, runs), {r: self.count(conv, r) for r in runs})
        story.expect_quiet(0.5)
        again.expect_quiet(0.1)

        # search finds it; delete takes it and its codex session file
        q = urllib.parse.quote("kumquat")
        _, doc = self.call("GET", f"/v1/conversations?q={q}", "/v1/conversations", 200)
        self.assertEqual([c["id"] for c in doc["conversations"]], [conv])
        self.assertIn("kumquat", doc["conversations"][0]["snippet"])
        self.assertTrue(self.session_files(native))
        _, doc = self.call("DELETE", f"/v1/conversations/{conv}", CONV, 200)
        self.assertEqual(doc, {"removed": conv})
        self.error("GET", f"/v1/conversations/{conv}", CONV, 404, "not_found")
        self.error("DELETE", f"/v1/conversations/{conv}", CONV, 404, "not_found")
        _, doc = self.call("GET", f"/v1/conversations?q={q}", "/v1/conversations", 200)
        self.assertEqual(doc["conversations"], [])
        self.assertEqual(self.session_files(native), [])
        print(f"all: {time.monotonic() - t0:.1f} s", file=sys.stderr)

    def next_run(self, conv, after):
        """The id of the run that started after run after."""
        def started():
            ids = [r["id"] for r in self.detail(conv)["runs"]]
            return ids[ids.index(after) + 1] if ids.index(after) + 1 < len(ids) else None
        return wait_for(started, 60, f"the run after {after}")

    def count(self, conv, run):
        """How many events run has (its turn.completed's seq)."""
        s = self.open(f"/v1/conversations/{conv}/events?run={run}")
        return len(self.follow(s, run))

    def dashboard(self, s, runs):
        """Read /v1/events until every run in runs ended; each run's events
        must come seq 1..n once, in order: {run: n}."""
        seen = {}
        ended = set()
        while ended != set(runs):
            ev, _ = self.event(s, timeout=60)
            r = ev["run"]
            self.assertIn(r, runs, ev)
            self.assertEqual(ev["seq"], seen.get(r, 0) + 1, f"run {r}: {ev}")
            self.assertNotIn(r, ended, ev)
            seen[r] = ev["seq"]
            if ev["type"] == "turn.completed":
                ended.add(r)
        s.expect_quiet(0.3)
        return seen

    def session_files(self, native):
        """The codex rollout files of thread native under the codex home."""
        top = os.path.join(self.home.env["CODEX_HOME"], "sessions")
        return [os.path.join(d, f) for d, _, fs in os.walk(top) for f in fs if native in f]


if __name__ == "__main__":
    if not CODEX_BIN or not os.access(CODEX_BIN, os.X_OK):
        servetest.skip("BATON_TEST_CODEX_BIN does not name a codex binary "
                       "(bash tests/scripts/install-codex.sh prints the pinned one's path)")
    if not os.access(servetest.STANDIN, os.X_OK):
        print(f"error: baton-standin is not built: {servetest.STANDIN}", file=sys.stderr)
        sys.exit(1)
    servetest.main()
