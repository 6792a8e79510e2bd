#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""serve-ask: approvals and questions answered through the API under
`"approval": "ask"` (docs/api.md, GET and POST /v1/conversations/{id}/requests).

The fake coder as codex replays fixtures/codex/0.171.0/shell-approved.jsonl:
codex asks to run a command (request id 0) and waits for the answer,
which it gets only once a person decided through the API. What baton
wrote to the coder is the fake's stdin log. Every response is checked
against src/serve/web/openapi.json.
"""
import json
import os

import servetest
from servetest import Home, ServeCase, wait_for

FIXTURE = servetest.TOP / "fixtures/codex/0.171.0/shell-approved.jsonl"
ACCEPT = '{"id":0,"result":{"decision":"accept"}}'
DECLINE = '{"id":0,"result":{"decision":"decline"}}'
# codex item/tool/requestUserInput in place of the command approval
QUESTION = (
    '{"id":0,"method":"item/tool/requestUserInput","params":{"threadId":'
    '"01a22760-2b05-77b0-a417-30527fa9d43e","turnId":"01a22760-2b46-7471-9b27-b0c3c20705d3",'
    '"itemId":"call_q","isBlocking":true,"questions":[{"id":"color","header":"Colour",'
    '"question":"Which colour?","options":[{"label":"Red"},{"label":"Blue"}]},{"id":"name",'
    '"header":"Name","question":"What name?","options":null}]}}\n')
ANSWERS = '{"id":0,"result":{"answers":{"color":{"answers":["Blue"]},"name":{"answers":["Ada"]}}}}'
# codex mcpServer/elicitation/request, a form (MCP requestedSchema), in its place
FORM = (
    '{"id":0,"method":"mcpServer/elicitation/request","params":{"threadId":'
    '"01a22760-2b05-77b0-a417-30527fa9d43e","turnId":"01a22760-2b46-7471-9b27-b0c3c20705d3",'
    '"serverName":"shop","mode":"form","message":"Order what?","requestedSchema":{"type":'
    '"object","properties":{"item":{"type":"string","title":"Item"},"count":{"type":"integer",'
    '"minimum":1},"size":{"type":"string","oneOf":[{"const":"s","title":"Small"},{"const":"l",'
    '"title":"Large"}]}},"required":["item","count"]}}}\n')
FORM_ANSWER = ('{"id":0,"result":{"action":"accept","content":{"item":"tea","count":3,'
               '"size":"l"}}}')


class Ask(ServeCase):
    home_name = "ask"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.home.env["FAKE_CODER_REPLAY"] = str(FIXTURE)  # the workers take it from serve's
        cls.serve.stop()
        cls.serve = cls.home.serve()
        cls.client = cls.serve.client()

    def log_path(self):
        return os.path.join(self.home.dir, f"stdin-{self._testMethodName}.log")

    def start(self):
        """A turn under ask, waiting on request 0; (conv, its listing)."""
        self.home.env["FAKE_CODER_LOG_STDIN"] = self.log_path()
        type(self).serve.stop()
        type(self).serve = self.home.serve()
        type(self).client = type(self).serve.client()
        conv, _ = self.create("run it", approval="ask", idle_timeout=60)
        target = f"/v1/conversations/{conv}/requests"

        def waiting():
            _, doc = self.call("GET", target, "/v1/conversations/{id}/requests", 200)
            return doc if doc["requests"] else None
        doc = wait_for(waiting, 30, "the request to wait for a person")
        return conv, doc

    def decide(self, conv, n, body, status):
        return self.call("POST", f"/v1/conversations/{conv}/requests/{n}",
                         "/v1/conversations/{id}/requests/{n}", status, body)

    def resolved(self, conv):
        events = [json.loads(x) for x in self.home.attach_lines(conv) if x.startswith("{")]
        return [e for e in events if e["type"] == "approval.resolved"]

    def coder_stdin(self):
        with open(self.log_path()) as f:
            return f.read()

    def test_allow_runs_the_command(self):
        conv, doc = self.start()
        self.assertEqual(len(doc["requests"]), 1)
        req = doc["requests"][0]
        self.assertEqual((req["request_id"], req["kind"]), ("0", "command"))
        self.assertEqual(req["summary"], "/bin/bash -lc 'echo baton-ok'")
        _, got = self.decide(conv, "0", {"decision": "allow"}, 202)
        self.assertEqual(got["request_id"], "0")
        self.idle(conv)
        res = self.resolved(conv)
        self.assertEqual([(e["decision"], e["by"]) for e in res], [("accept", "user")])
        self.assertIn(ACCEPT, self.coder_stdin())
        # answered: a second answer is late, refused, and nothing more is written
        self.error("POST", f"/v1/conversations/{conv}/requests/0",
                   "/v1/conversations/{id}/requests/{n}", 409, "conflict", {"decision": "deny"})
        self.assertNotIn(DECLINE, self.coder_stdin())

    def test_deny_does_not(self):
        conv, _ = self.start()
        self.error("POST", f"/v1/conversations/{conv}/requests/0",
                   "/v1/conversations/{id}/requests/{n}", 400, "bad_request",
                   {"decision": "maybe"})
        self.error("POST", f"/v1/conversations/{conv}/requests/0",
                   "/v1/conversations/{id}/requests/{n}", 400, "bad_request",
                   {"decision": "allow", "answers": [["yes"]]})  # no question
        self.error("POST", f"/v1/conversations/{conv}/requests/7",
                   "/v1/conversations/{id}/requests/{n}", 409, "conflict", {"decision": "allow"})
        self.decide(conv, "0", {"decision": "deny"}, 202)
        self.idle(conv)
        res = self.resolved(conv)
        self.assertEqual([(e["decision"], e["by"]) for e in res], [("decline", "user")])
        self.assertIn(DECLINE, self.coder_stdin())
        self.assertNotIn(ACCEPT, self.coder_stdin())

    def start_with(self, line):
        """start() with the fake coder asking line in place of the command."""
        lines = FIXTURE.read_text().splitlines(keepends=True)
        lines[11] = line
        path = os.path.join(self.home.dir, f"{self._testMethodName}.jsonl")
        with open(path, "w") as f:
            f.writelines(lines)
        self.home.env["FAKE_CODER_REPLAY"] = path
        try:
            return self.start()
        finally:
            self.home.env["FAKE_CODER_REPLAY"] = str(FIXTURE)

    def test_form_answered(self):
        """A codex MCP form: a question per field in the listing; answers
        the form cannot take (not an integer, below its minimum, not a
        choice, a required field missing) are 400 with the reason, nothing
        written, the request still listed; the right ones reach codex as
        the typed content, once."""
        conv, doc = self.start_with(FORM)
        req = doc["requests"][0]
        self.assertEqual(req["kind"], "user_input")
        self.assertEqual([q["id"] for q in req["questions"]], ["item", "count", "size"])
        self.assertEqual(req["questions"][2]["options"], [{"label": "Small"}, {"label": "Large"}])
        target = f"/v1/conversations/{conv}/requests/0"
        template = "/v1/conversations/{id}/requests/{n}"
        bad = [
            ([["tea"], ["three"]], "answer 2 (count, integer) is not an integer"),
            ([["tea"], ["0"]], "answer 2 (count, integer) is outside the form's bounds"),
            ([["tea"], ["2"], ["Huge"]], "answer 3 (size, string) is not among the form's choices"),
            ([["tea"]], "answer 2 (count) is required"),
        ]
        for answers, why in bad:
            err = self.error("POST", target, template, 400, "bad_request",
                             {"decision": "allow", "answers": answers})
            self.assertIn(why, err["error"]["message"], answers)
            _, listed = self.call("GET", f"/v1/conversations/{conv}/requests",
                                  "/v1/conversations/{id}/requests", 200)
            self.assertEqual([r["request_id"] for r in listed["requests"]], ["0"])
        self.assertNotIn('"id":0,"result"', self.coder_stdin())
        self.decide(conv, "0", {"decision": "allow", "answers": [["tea"], ["3"], ["Large"]]}, 202)
        self.idle(conv)
        sent = self.coder_stdin()
        self.assertEqual(sent.count('"id":0,"result"'), 1)
        self.assertIn(FORM_ANSWER, sent)

    def test_question_answers_checked(self):
        """Answers to a codex requestUserInput: a body cJSON would take in
        changed (a NUL ending a string, bytes not UTF-8, a lone surrogate,
        text after the value, a member twice) and answers that are no
        answer (empty, blank, an empty list) are 400 with nothing
        written to the coder; the right answer then goes through once."""
        lines = FIXTURE.read_text().splitlines(keepends=True)
        lines[11] = QUESTION
        path = os.path.join(self.home.dir, "question.jsonl")
        with open(path, "w") as f:
            f.writelines(lines)
        self.home.env["FAKE_CODER_REPLAY"] = path
        try:
            conv, doc = self.start()
        finally:
            self.home.env["FAKE_CODER_REPLAY"] = str(FIXTURE)
        self.assertEqual(doc["requests"][0]["kind"], "user_input")
        target = f"/v1/conversations/{conv}/requests/0"
        template = "/v1/conversations/{id}/requests/{n}"
        bad = [
            (b'{"decision":"allow","answers":[["Bl\\u0000ue"],["Ada"]]}', "NUL"),
            (b'{"decision":"allow","answers":[["\xff\xfe"],["Ada"]]}', "not UTF-8"),
            (b'{"decision":"allow","answers":[["\\ud800"],["Ada"]]}', "one JSON value"),
            (b'{"decision":"deny"} and more', "one JSON value"),
            (b'{"decision":"allow","answers":[["Red"]],"answers":[["Blue"],["Ada"]]}',
             "each once"),
            (b'{"decision":"deny","decision":"allow"}', "each once"),
            (b'{"decision":"allow","answers":[[""],["Ada"]]}', "not blank"),
            (b'{"decision":"allow","answers":[["Blue"],["  "]]}', "not blank"),
            (b'{"decision":"allow","answers":[["Blue"],[]]}', "not blank"),
        ]
        for body, why in bad:
            err = self.error("POST", target, template, 400, "bad_request", body)
            self.assertIn(why, err["error"]["message"], body)
        self.assertNotIn('"id":0,"result"', self.coder_stdin())
        self.decide(conv, "0", {"decision": "allow", "answers": [["Blue"], ["Ada"]]}, 202)
        self.idle(conv)
        sent = self.coder_stdin()
        self.assertEqual(sent.count('"id":0,"result"'), 1)
        self.assertIn(ANSWERS, sent)


if __name__ == "__main__":
    servetest.main()
