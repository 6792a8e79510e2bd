#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""serve-turns: the bound on turns running at once (docs/api.md, "Turns
at once"; src/slot.h).

A serve started with --max-turns 1 and the fake coder held at its pause:
a second turn waits (`waiting` in GET /v1/conversations, the detail's run,
`baton ls`, `baton ls --json`, `baton show`, and `baton attach` says so)
with no coder started,
and a turn of `baton run --detach` with BATON_MAX_TURNS=1 waits behind it
too; each starts once the one before it ended, in the order they asked; a
waiting turn cancelled (through the API, and with `baton cancel`) ends
cancelled without its coder ever starting; a
worker killed while its turn runs frees its slot for the next.
"""
import json
import os
import signal
import subprocess

import servetest
from servetest import ANSWER, ServeCase, wait_for

LIST = "/v1/conversations"


def events_of(home, conv):
    """The last turn's events of conv, as `baton attach --json` prints them."""
    return [json.loads(x) for x in home.attach_lines(conv) if x.startswith("{")]


def worker_pids(conv):
    """The pids of the workers (`baton __worker ... -- CONV`) of conv."""
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if b"__worker" in argv and conv.encode() in argv:
            pids.append(int(pid))
    return pids


class Turns(ServeCase):
    home_name = "turns"
    serve_args = ("--max-turns", "1")

    def state_in_list(self, conv):
        _, doc = self.call("GET", LIST, LIST, 200)
        return next(c["last_run_state"] for c in doc["conversations"] if c["id"] == conv)

    def first_held(self):
        """A first turn, held at the fake coder's pause: it has the slot."""
        self.home.gate.hold()
        conv, run = self.create("the first turn")
        self.held(conv, run)
        return conv, run

    def assert_waiting(self, conv, run):
        wait_for(lambda: self.state_in_list(conv) == "waiting", 20, f"{conv} to wait")
        self.assertEqual(self.run_of(conv, run)["state"], "waiting")
        self.assertEqual(self.detail(conv)["running"], run)  # busy, as a running one
        ls = {c["id"]: c for c in self.home.ls()}
        self.assertEqual(ls[conv]["last_run_state"], "waiting")
        human = self.home.baton("ls").stdout.decode()
        self.assertRegex(human, rf"(?m)^{conv[:12]}  codex +waiting ")  # columns as ls aligns them
        shown = self.home.baton("show", conv).stdout.decode()
        self.assertIn("codex (waiting for a turn slot: no coder runs yet):", shown)
        debug = self.home.baton("show", "--debug", conv).stdout.decode()
        self.assertIn(f"[run {run}: waiting", debug)
        # no coder started: not one event of the run
        self.assertIsNone(self.detail(conv)["last_event"])
        # attach says why nothing comes (stopped at once: it would follow)
        p = subprocess.Popen(servetest.baton_argv(["attach", conv]), env=self.home.env,
                             cwd=self.home.dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            line = p.stderr.readline().decode()
        finally:
            p.send_signal(signal.SIGINT)
            p.communicate(timeout=30)
        self.assertIn("waits for a turn slot", line)

    def test_waiting_turns_start_in_order(self):
        conv1, run1 = self.first_held()
        conv2, run2 = self.create("the second turn")
        self.assert_waiting(conv2, run2)
        # a detached turn of the CLI, under the same bound, waits behind it
        env = dict(self.home.env, BATON_MAX_TURNS="1")
        p = subprocess.run(servetest.baton_argv(["run", "--detach", "-C", self.home.project,
                                                 "the third turn"]),
                           env=env, cwd=self.home.dir, capture_output=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        conv3 = next(c["id"] for c in self.home.ls() if c["title"] == "the third turn")
        run3 = self.detail(conv3)["running"]
        self.assert_waiting(conv3, run3)
        self.assertEqual(self.state_in_list(conv1), "running")
        self.home.gate.release()
        for conv in (conv1, conv2, conv3):
            d = self.idle(conv)
            self.assertEqual(d["runs"][-1]["state"], "completed")
            self.assertEqual(d["messages"][-1]["text"], ANSWER)
        # one at a time, in the order asked: each turn started after the
        # one before it completed
        ends = []
        for conv in (conv1, conv2, conv3):
            evs = events_of(self.home, conv)
            self.assertEqual(evs[0]["type"], "turn.started")
            self.assertEqual(evs[-1]["type"], "turn.completed")
            ends.append((evs[0]["ts"], evs[-1]["ts"]))
        self.assertLessEqual(ends[0][1], ends[1][0])
        self.assertLessEqual(ends[1][1], ends[2][0])

    def test_cancel_of_a_waiting_turn(self):
        conv1, run1 = self.first_held()
        conv2, run2 = self.create("cancelled while it waits")
        self.assert_waiting(conv2, run2)
        self.call("POST", f"/v1/conversations/{conv2}/cancel",
                  "/v1/conversations/{id}/cancel", 202)
        wait_for(lambda: self.run_of(conv2, run2)["state"] == "cancelled", 20,
                 "the waiting turn to end cancelled")
        evs = events_of(self.home, conv2)
        self.assertEqual([e["type"] for e in evs], ["turn.completed"], evs)
        self.assertEqual(evs[0]["status"], "cancelled")
        self.assertIn("never started", evs[0]["error"])
        self.assertIsNone(self.run_of(conv2, run2)["coder_version"])
        # and with `baton cancel`, which waits for the run to end
        conv3, run3 = self.create("cancelled by the CLI while it waits")
        self.assert_waiting(conv3, run3)
        p = self.home.baton("cancel", conv3)
        self.assertIn(f"run {run3} of {conv3} ended cancelled", p.stderr.decode())
        evs = events_of(self.home, conv3)
        self.assertEqual([(e["type"], e["status"]) for e in evs], [("turn.completed", "cancelled")])
        # the first turn was never disturbed, and the slot goes on working
        self.assertEqual(self.state_in_list(conv1), "running")
        self.home.gate.release()
        self.assertEqual(self.idle(conv1)["messages"][-1]["text"], ANSWER)
        conv3, _ = self.create("after the cancel")
        self.assertEqual(self.idle(conv3)["messages"][-1]["text"], ANSWER)

    def test_killed_worker_frees_its_slot(self):
        conv1, run1 = self.first_held()
        conv2, run2 = self.create("waits for a killed worker's slot")
        self.assert_waiting(conv2, run2)
        pids = worker_pids(conv1)
        self.assertEqual(len(pids), 1, pids)
        os.kill(pids[0], signal.SIGKILL)
        # the next turn gets the slot: it starts and reaches the pause
        self.held(conv2, run2)
        self.assertEqual(self.run_of(conv2, run2)["state"], "running")
        wait_for(lambda: self.run_of(conv1, run1)["state"] == "interrupted", 20,
                 "the killed worker's run to be recovered")
        self.home.gate.release()
        self.assertEqual(self.idle(conv2)["messages"][-1]["text"], ANSWER)


if __name__ == "__main__":
    servetest.main()
