#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""serve-steer: POST /v1/conversations/{id}/steer (docs/api.md) against the
real server with the fake coder as codex replaying a recorded codex steer
(fixtures/codex/0.171.0/steer.jsonl): the fake writes codex's answer to
turn/steer only once baton sent it, so the turn ends only after the steer
went in, whatever the timing.

- a steer while the turn runs: 202, stored for the owner (pending or
  done), then the turn's events hold turn.steered with its control and
  text, and the turn's answer is the steer's; nothing is queued;
- a steer with no turn running: 202 queued at once, with its number and
  the reason, listed in the detail's queued, taken back with DELETE;
- a bad body: 400, nothing stored.
Every response is checked against openapi.json.
"""
import json

import servetest
from servetest import ServeCase, wait_for

STEER = "/v1/conversations/{id}/steer"
FIXTURE = str(servetest.TOP / "fixtures/codex/0.171.0/steer.jsonl")
TEXT = "steer-words-banana"


class Steer(ServeCase):
    home_name = "steer"
    home_env = {"FAKE_CODER_REPLAY": FIXTURE}

    def events(self, conv):
        return [json.loads(x) for x in self.home.attach_lines(conv) if x.startswith("{")]

    def steer(self, conv, body, status=202):
        _, doc = self.call("POST", f"/v1/conversations/{conv}/steer", STEER, status, body)
        return doc

    def test_steer_into_the_running_turn(self):
        conv, run = self.create("first [[slow:25]]")
        # the turn streams (codex named the turn) before the steer comes
        wait_for(lambda: any(m["run"] == run and m["role"] == "assistant" and m["text"]
                             for m in self.home.show(conv)["messages"]),
                 30, "the turn to stream")
        doc = self.steer(conv, {"prompt": TEXT, "idle_timeout": 30})
        self.assertEqual(doc["conversation"], conv)
        self.assertEqual(doc["run"], run)
        self.assertIn(doc["state"], ("pending", "done"))
        self.assertIsNone(doc["queue_no"])
        control = doc["control"]
        self.assertGreaterEqual(control, 1)
        d = self.idle(conv)
        steered = [e for e in self.events(conv) if e["type"] == "turn.steered"]
        self.assertEqual(len(steered), 1)
        self.assertEqual(steered[0]["text"], TEXT)
        self.assertEqual(steered[0]["control"], control)
        self.assertEqual(steered[0]["run"], run)
        self.assertEqual(d["queued"], [])
        answer = [m for m in d["messages"] if m["run"] == run and m["role"] == "assistant"]
        self.assertEqual(answer[0]["text"], "Hello! You said: " + TEXT)

    def test_steer_without_a_turn_is_queued(self):
        conv, run = self.create("first [[slow:25]]")
        self.steer(conv, {"prompt": TEXT})  # lets that turn end
        self.idle(conv)
        doc = self.steer(conv, {"prompt": "later words"})
        self.assertEqual(doc["state"], "queued")
        self.assertIsNone(doc["control"])
        self.assertIsNone(doc["run"])
        self.assertEqual(doc["reason"], "no turn was running")
        n = doc["queue_no"]
        queued = self.detail(conv)["queued"]
        self.assertEqual([q["n"] for q in queued], [n])
        self.assertEqual(queued[0]["text"], "later words")
        self.call("DELETE", f"/v1/conversations/{conv}/queue/{n}",
                  "/v1/conversations/{id}/queue/{n}", 200)

    def test_bad_bodies(self):
        conv, run = self.create("first [[slow:25]]")
        self.error("POST", f"/v1/conversations/{conv}/steer", STEER, 400, "bad_request",
                   {"prompt": "   "})
        self.error("POST", f"/v1/conversations/{conv}/steer", STEER, 400, "bad_request",
                   {"prompt": "x", "force": True})
        self.error("POST", f"/v1/conversations/{conv}/steer", STEER, 400, "bad_request", {})
        self.steer(conv, {"prompt": TEXT})  # lets that turn end
        self.assertEqual(self.idle(conv)["queued"], [])


if __name__ == "__main__":
    servetest.main()
