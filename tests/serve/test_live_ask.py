#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""serve-live-ask: approvals answered through the API with the real codex
CLI (0.171.0, BATON_TEST_CODEX_BIN) against the local stand-in model,
under `"approval": "ask"` (docs/api.md, /v1/conversations/{id}/requests).

codex asks to run the stand-in's `[[shell:touch FILE && echo hi]]` (its
approvalPolicy untrusted); the request waits, listed by GET .../requests
with the command; allowed by POST .../requests/{n}, the command runs (the
file is made) and approval.resolved says accept by user; in a second
conversation denied, the command does not run (no file) and it says
decline by user. Every response is checked against src/serve/web/openapi.json.

Without BATON_TEST_CODEX_BIN naming an executable the program prints
SKIPPED and exits 77 (ctest: Skipped, never Passed).
"""
import json
import os
import sys

import servetest
from servetest import ServeCase, wait_for

CODEX_BIN = os.environ.get("BATON_TEST_CODEX_BIN", "")
REQUESTS = "/v1/conversations/{id}/requests"


class LiveAsk(ServeCase):
    home_name = "live-ask"
    codex_bin = CODEX_BIN

    def waiting(self, conv):
        """The first request of conv that waits for a person."""
        def one():
            _, doc = self.call("GET", f"/v1/conversations/{conv}/requests", REQUESTS, 200)
            return doc["requests"][0] if doc["requests"] else None
        return wait_for(one, 120, "codex's approval request")

    def resolved(self, conv):
        events = [json.loads(x) for x in self.home.attach_lines(conv) if x.startswith("{")]
        return [(e["decision"], e["by"]) for e in events if e["type"] == "approval.resolved"]

    def decide_and_finish(self, name, decision):
        conv, _ = self.create(f"[[shell:touch {name} && echo hi]]", coder="codex",
                              approval="ask", idle_timeout=120)
        req = self.waiting(conv)
        self.assertEqual(req["kind"], "command")
        self.assertIn(f"touch {name}", req["summary"])
        self.call("POST", f"/v1/conversations/{conv}/requests/{req['request_id']}",
                  REQUESTS + "/{n}", 202, {"decision": decision})
        d = self.idle(conv, timeout=120)
        self.assertEqual(d["runs"][-1]["state"], "completed")
        return conv

    def test_allowed_runs_the_command(self):
        conv = self.decide_and_finish("allowed-file", "allow")
        self.assertEqual(self.resolved(conv), [("accept", "user")])
        self.assertTrue(os.path.exists(os.path.join(self.home.project, "allowed-file")))

    def test_denied_does_not(self):
        conv = self.decide_and_finish("denied-file", "deny")
        self.assertEqual(self.resolved(conv), [("decline", "user")])
        self.assertFalse(os.path.exists(os.path.join(self.home.project, "denied-file")))


if __name__ == "__main__":
    if not CODEX_BIN or not os.access(CODEX_BIN, os.X_OK):
        servetest.skip("BATON_TEST_CODEX_BIN does not name a codex binary "
                       "(bash tests/scripts/install-codex.sh prints the pinned one's path)")
    if not os.access(servetest.STANDIN, os.X_OK):
        print(f"error: baton-standin is not built: {servetest.STANDIN}", file=sys.stderr)
        sys.exit(1)
    servetest.main()
