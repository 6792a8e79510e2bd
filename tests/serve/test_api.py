#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""serve-api: the endpoints of docs/api.md against the real `baton serve`.

Coders; create (201 + Location), get, list, search; a follow-up while a
turn runs (queued, then its own turn); taking a queued message back;
cancel and retry; handoff (print and tmux); delete; not found and
method not allowed. Every response is checked against
src/serve/web/openapi.json (contract.py); objects are compared with what the
CLI prints for the same home.
"""
import json
import os
import subprocess

import servetest
from servetest import ANSWER, HELD_ANSWER, NATIVE_ID, USAGE, ServeCase, wait_for

CONV = "/v1/conversations/{id}"
UNKNOWN = "0mx66kzscsm2vv13gfc3ti"  # a well-formed id no conversation has


class Api(ServeCase):
    home_name = "api"

    def test_coders(self):
        _, doc = self.call("GET", "/v1/coders", "/v1/coders", 200)
        cli = [json.loads(line) for line in
               self.home.baton("coders", "--json").stdout.decode().splitlines()]
        self.assertEqual(doc["coders"], cli)
        codex = [c for c in doc["coders"] if c["coder"] == "codex"]
        self.assertEqual(codex[0]["path"], servetest.FAKE)
        self.assertTrue(codex[0]["installed"])
        for c in doc["coders"]:
            if c["coder"] in servetest.OTHER_CODERS:
                self.assertFalse(c["installed"], c)

    def test_create_and_get(self):
        conv, run = self.create("first words\nsecond line")
        d = self.idle(conv)
        c = d["conversation"]
        self.assertEqual((c["id"], c["title"], c["coder"], c["cwd"], c["model"], c["status"]),
                         (conv, "first words", "codex", self.home.project, None, "active"))
        self.assertEqual(c["native_session_id"], NATIVE_ID)
        self.assertEqual(c["last_run"], run)
        self.assertEqual(c["last_run_state"], "completed")
        self.assertEqual([(m["role"], m["state"], m["text"]) for m in d["messages"]],
                         [("user", "complete", "first words\nsecond line"),
                          ("assistant", "complete", ANSWER)])
        (r,) = d["runs"]
        self.assertEqual(r["id"], run)
        self.assertEqual((r["turn"], r["state"], r["exit_code"], r["coder_version"], r["coder"]),
                         (1, "completed", 0, "0.171.0", "codex"))  # the first coder listed, as `baton run`
        self.assertEqual(r["native_session_id"], NATIVE_ID)
        self.assertEqual(r["usage"], USAGE)
        self.assertIsNotNone(r["ended"])
        self.assertFalse(r["cancel_requested"])
        self.assertIsNone(d["running"])
        self.assertEqual(d["last_event"], f"{run}:{servetest.EVENTS_PER_TURN}")
        self.assertEqual(d["queued"], [])
        ctx = d["context"]
        self.assertEqual((ctx["tokens"], ctx["window"]), (3705, 258400))
        self.assertAlmostEqual(ctx["percent"], 100 * 3705 / 258400, delta=0.05)
        # the objects of the CLI, for the same home
        (ls,) = [x for x in self.home.ls() if x["id"] == conv]
        self.assertEqual({k: c[k] for k in ls}, ls)
        self.assertLessEqual(set(c) - set(ls), {"context"})
        self.assertEqual(d["messages"], self.home.show(conv)["messages"])
        self.assertNotIn("html", d["messages"][0])

    def test_create_with_options(self):
        conv, run = self.create("with options", coder="codex", model="baton-test",
                                approval="auto", timeout=120, idle_timeout=60.5)
        d = self.idle(conv)
        self.assertEqual(d["conversation"]["model"], "baton-test")
        self.assertEqual(d["runs"][0]["model"], "baton-test")
        self.assertEqual(d["runs"][0]["state"], "completed")
        conv, _ = self.create("approval never, no limits", approval="never", timeout=0,
                                idle_timeout=0, model=None)
        self.assertEqual(self.idle(conv)["runs"][0]["state"], "completed")

    def test_snapshot_option(self):
        # "snapshot": false is --no-snapshot: no changes recorded, nothing in
        # baton's store; the default snapshots; anything but a boolean is a 400
        repo = os.path.join(self.home.dir, "gitproj")
        os.mkdir(repo)
        git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]
        subprocess.run(["git", "init", "-q", repo], check=True)
        with open(os.path.join(repo, "a.txt"), "w") as f:
            f.write("a\n")
        subprocess.run(git + ["-C", repo, "add", "a.txt"], check=True)
        subprocess.run(git + ["-C", repo, "commit", "-qm", "a"], check=True)
        off, _ = self.create("no snapshot", cwd=repo, snapshot=False)
        self.assertEqual(self.idle(off)["runs"][0]["state"], "completed")
        p = self.home.baton("diff", off, check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn(b"no changes were recorded", p.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.home.home, "snapshots")))
        on, _ = self.create("with snapshots", cwd=repo, snapshot=True)
        self.idle(on)
        self.assertEqual(self.home.baton("diff", on).returncode, 0)
        self.assertTrue(os.path.isdir(os.path.join(self.home.home, "snapshots")))
        self.error("POST", "/v1/conversations", "/v1/conversations", 400, "bad_request",
                   {"prompt": "x", "cwd": repo, "snapshot": "no"})

    def test_coder_not_installed(self):
        before = self.home.ls()
        self.error("POST", "/v1/conversations", "/v1/conversations", 422, "not_installed",
                   {"prompt": "to pi", "cwd": self.home.project, "coder": "pi"})
        # a name that is no coder at all is a bad request, not "not installed"
        self.error("POST", "/v1/conversations", "/v1/conversations", 400, "bad_request",
                   {"prompt": "to nobody", "cwd": self.home.project, "coder": "nosuch"})
        self.assertEqual(self.home.ls(), before)

    def test_list_and_search(self):
        a, _ = self.create("alpha walrus")
        self.idle(a)
        b, _ = self.create("beta narwhal")
        self.idle(b)
        _, doc = self.call("GET", "/v1/conversations", "/v1/conversations", 200)
        ids = [c["id"] for c in doc["conversations"]]
        self.assertLess(ids.index(b), ids.index(a), "newest first")
        self.assertEqual(ids, [c["id"] for c in self.home.ls()][:len(ids)])
        listed = {c["id"]: c for c in doc["conversations"]}
        detail = self.detail(a)
        self.assertEqual(listed[a]["context"], detail["context"])
        self.assertEqual({k: v for k, v in listed[a].items() if k != "context"},
                         {k: v for k, v in detail["conversation"].items() if k != "context"})
        _, doc = self.call("GET", "/v1/conversations?limit=1", "/v1/conversations", 200)
        self.assertEqual([c["id"] for c in doc["conversations"]], ids[:1])
        _, doc = self.call("GET", "/v1/conversations?limit=1000", "/v1/conversations", 200)
        self.assertEqual([c["id"] for c in doc["conversations"]], ids)
        _, doc = self.call("GET", "/v1/conversations?q=walrus", "/v1/conversations", 200)
        self.assertEqual([c["id"] for c in doc["conversations"]], [a])
        self.assertIn("snippet", doc["conversations"][0])
        self.assertIn("context", doc["conversations"][0])
        _, doc = self.call("GET", "/v1/conversations?q=narwhal&limit=5", "/v1/conversations",
                           200)
        self.assertEqual([c["id"] for c in doc["conversations"]], [b])
        _, doc = self.call("GET", "/v1/conversations?q=banana", "/v1/conversations", 200)
        self.assertLessEqual({a, b}, {c["id"] for c in doc["conversations"]})
        self.assertIn("banana", doc["conversations"][0]["snippet"])  # from the answer
        _, doc = self.call("GET", "/v1/conversations?q=zzqqxxnothing", "/v1/conversations",
                           200)
        self.assertEqual(doc["conversations"], [])
        for q in ("limit=0", "limit=1001", "limit=x", "limit=", "limit=-1", "limit=1.5",
                  "limit=99999999999999999999"):
            with self.subTest(query=q):
                self.error("GET", f"/v1/conversations?{q}", "/v1/conversations", 400,
                           "bad_request")

    def test_follow_up_queued_then_sent(self):
        self.home.gate.hold()
        conv, run = self.create("one")
        self.held(conv, run)
        doc = self.send(conv, "two")
        self.assertEqual(doc["state"], "queued")
        n = doc["n"]  # the first prompt may have had a number: it went to a worker's queue
        d = self.detail(conv)
        self.assertEqual(d["running"], run)
        self.assertEqual(self.run_of(conv, run)["state"], "running")
        self.assertEqual([(q["n"], q["text"]) for q in d["queued"]], [(n, "two")])
        self.assertEqual([(m["role"], m["state"]) for m in d["messages"]],
                         [("user", "complete"), ("assistant", "streaming"), ("user", "queued")])
        self.assertEqual(d["messages"][2]["queue_no"], n)
        self.assertIsNone(d["messages"][1]["queue_no"])
        self.assertEqual(d["messages"][1]["text"], HELD_ANSWER)  # the text so far
        self.assertEqual(self.home.show(conv)["messages"], d["messages"])
        self.home.gate.release()
        d = self.idle(conv)
        self.assertEqual([(r["turn"], r["state"]) for r in d["runs"]],
                         [(1, "completed"), (2, "completed")])
        self.assertEqual([(m["role"], m["state"], m["text"]) for m in d["messages"]],
                         [("user", "complete", "one"), ("assistant", "complete", ANSWER),
                          ("user", "complete", "two"), ("assistant", "complete", ANSWER)])
        self.assertEqual(d["messages"][2]["queue_no"], n)  # kept once sent
        self.assertEqual(d["queued"], [])
        # nothing runs: the next message starts at once
        doc = self.send(conv, "three")
        self.assertEqual(doc["state"], "started")
        d = self.idle(conv)
        self.assertEqual([(r["id"], r["turn"]) for r in d["runs"]][2], (doc["run"], 3))

    def test_take_back_queued(self):
        self.home.gate.hold()
        conv, run = self.create("keep going")
        self.held(conv, run)
        first = self.send(conv, "taken back")
        self.assertEqual(first["state"], "queued")
        n = first["n"]
        self.assertEqual(self.send(conv, "kept"), {"state": "queued", "n": n + 1})
        q = "/v1/conversations/{id}/queue/{n}"
        _, doc = self.call("DELETE", f"/v1/conversations/{conv}/queue/{n}", q, 200)
        self.assertEqual(doc, {"removed": n})
        for k in (n, n + 2, 99):  # taken back already, never given, never given
            with self.subTest(n=k):
                self.error("DELETE", f"/v1/conversations/{conv}/queue/{k}", q, 404,
                           "not_found")
        for k in ("0", "-1", "abc", "1.0", "01x", f"{n + 1}%00"):
            with self.subTest(n=k):  # not a queue number: no such route
                self.api.check_error(self.client.delete(f"/v1/conversations/{conv}/queue/{k}"),
                                     404, "not_found")
        d = self.detail(conv)
        self.assertEqual([(x["n"], x["text"]) for x in d["queued"]], [(first["n"] + 1, "kept")])
        self.home.gate.release()
        d = self.idle(conv)
        self.assertEqual([m["text"] for m in d["messages"] if m["role"] == "user"],
                         ["keep going", "kept"])
        self.assertEqual(len(d["runs"]), 2)
        self.error("DELETE", f"/v1/conversations/{conv}/queue/{first['n'] + 1}", q, 404,
                   "not_found")  # sent: no longer waiting

    def test_turn_order_after_cancel_queue_retry(self):
        """Cancel, a message queued meanwhile, retry: the conversation view
        (the web page's too) lists each answer under the prompt it answers,
        as `baton show --json` does; the retry's answer, stored after the
        queued prompt, came under it (issue 29)."""
        self.home.gate.hold()
        conv, run = self.create("one")
        self.held(conv, run)
        self.assertEqual(self.send(conv, "two")["state"], "queued")
        self.call("POST", f"/v1/conversations/{conv}/cancel", CONV + "/cancel", 202)

        def cancelled():
            d = self.detail(conv)
            return d if d["running"] is None else None
        d = wait_for(cancelled, 30, "the cancelled turn to end")
        self.assertEqual([(m["role"], m["state"]) for m in d["messages"]],
                         [("user", "complete"), ("assistant", "cancelled"), ("user", "queued")])
        self.home.gate.release()
        _, doc = self.call("POST", f"/v1/conversations/{conv}/retry", CONV + "/retry", 202)
        self.assertEqual(self.run_of(conv, doc["run"])["turn"], 1)
        d = self.idle(conv)
        self.assertEqual([(r["turn"], r["state"]) for r in d["runs"]],
                         [(1, "cancelled"), (1, "completed"), (2, "completed")])
        self.assertEqual([(m["role"], m["state"], m["text"]) for m in d["messages"]],
                         [("user", "complete", "one"), ("assistant", "cancelled", HELD_ANSWER),
                          ("assistant", "complete", ANSWER), ("user", "complete", "two"),
                          ("assistant", "complete", ANSWER)])
        self.assertEqual(d["messages"][2]["run"], doc["run"])
        self.assertEqual(self.home.show(conv)["messages"], d["messages"])

    def test_cancel_then_retry(self):
        self.home.gate.hold()
        conv, run = self.create("a slow one")
        self.held(conv, run)
        _, doc = self.call("POST", f"/v1/conversations/{conv}/cancel", CONV + "/cancel", 202)
        self.assertEqual(doc, {"run": run})
        self.assertTrue(self.run_of(conv, run)["cancel_requested"])
        d = self.idle(conv)
        (r,) = d["runs"]
        self.assertEqual(r["state"], "cancelled")
        self.assertTrue(r["cancel_requested"])
        self.assertEqual([(m["role"], m["state"]) for m in d["messages"]],
                         [("user", "complete"), ("assistant", "cancelled")])
        self.assertEqual(d["messages"][1]["text"], HELD_ANSWER)
        last = self.home.attach_lines(conv)[-1]
        self.assertEqual(json.loads(last)["status"], "cancelled")
        self.error("POST", f"/v1/conversations/{conv}/cancel", CONV + "/cancel", 409,
                   "conflict")
        # retry: another run of the same turn, while the gate still holds it
        _, doc = self.call("POST", f"/v1/conversations/{conv}/retry", CONV + "/retry", 202)
        self.assertEqual(doc["state"], "started")
        retry = doc["run"]
        self.assertNotEqual(retry, run)
        self.assertEqual(self.run_of(conv, retry)["turn"], 1)
        self.held(conv, retry)
        for method, path in (("POST", "/retry"), ("POST", "/handoff"), ("DELETE", "")):
            with self.subTest(busy=f"{method} {path}"):
                self.error(method, f"/v1/conversations/{conv}{path}", CONV + path, 409,
                           "busy")
        self.assertEqual(self.detail(conv)["running"], retry)
        self.home.gate.release()
        d = self.idle(conv)
        self.assertEqual([(r["id"], r["turn"], r["state"]) for r in d["runs"]],
                         [(run, 1, "cancelled"), (retry, 1, "completed")])
        self.assertEqual(d["messages"][-1]["text"], ANSWER)
        self.assertEqual(d["messages"][-1]["state"], "complete")
        self.error("POST", f"/v1/conversations/{conv}/retry", CONV + "/retry", 409,
                   "conflict")
        self.error("POST", f"/v1/conversations/{conv}/cancel", CONV + "/cancel", 409,
                   "conflict")

    def test_handoff(self):
        conv, _ = self.create("hand me off")
        self.idle(conv)
        printed = self.home.baton("handoff", "--print", conv).stdout.decode().rstrip("\n")
        for body in (None, {}, {"tmux": False}):
            with self.subTest(body=body):
                _, doc = self.call("POST", f"/v1/conversations/{conv}/handoff",
                                   CONV + "/handoff", 200, body)
                self.assertEqual(doc, {"command": printed, "cwd": self.home.project,
                                       "tmux": None})
        self.assertEqual(self.detail(conv)["conversation"]["status"], "active")
        for bad in ({"tmux": "yes"}, {"tmux": 1}, {"tmux": False, "print": True}):
            with self.subTest(bad=bad):
                self.error("POST", f"/v1/conversations/{conv}/handoff", CONV + "/handoff",
                           400, "bad_request", bad)
        _, doc = self.call("POST", f"/v1/conversations/{conv}/handoff", CONV + "/handoff",
                           200, {"tmux": True})
        self.assertIsInstance(doc["tmux"], str)
        has = subprocess.run(["tmux", "has-session", "-t", "=" + doc["tmux"]],
                             env=self.home.env, capture_output=True)
        self.assertEqual(has.returncode, 0, has.stderr)
        self.assertEqual(self.detail(conv)["conversation"]["status"], "transferred")
        n = len(self.detail(conv)["messages"])
        self.error("POST", f"/v1/conversations/{conv}/messages", CONV + "/messages", 409,
                   "conflict", {"prompt": "not without force"})
        self.assertEqual(len(self.detail(conv)["messages"]), n)
        doc = self.send(conv, "taken back with force", force=True)
        self.assertEqual(doc["state"], "started")
        d = self.idle(conv)
        self.assertEqual(d["messages"][-1]["text"], ANSWER)
        self.assertEqual(d["runs"][-1]["state"], "completed")

    def test_delete(self):
        conv, _ = self.create("delete me")
        self.idle(conv)
        _, doc = self.call("DELETE", f"/v1/conversations/{conv}", CONV, 200)
        self.assertEqual(doc, {"removed": conv})
        self.assertNotIn(conv, [c["id"] for c in self.home.ls()])
        self.error("GET", f"/v1/conversations/{conv}", CONV, 404, "not_found")
        self.error("DELETE", f"/v1/conversations/{conv}", CONV, 404, "not_found")
        self.error("GET", f"/v1/conversations/{conv}/events", CONV + "/events", 404,
                   "not_found")

    def test_same_rules_as_the_cli(self):
        # rm, handoff and cancel are one service under both front ends: the
        # API refuses what the CLI refuses, with the CLI's own sentence
        # (without "baton: "), and a cancel records the same thing
        repo = os.path.join(self.home.dir, "wtproj")
        os.mkdir(repo)
        git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]
        subprocess.run(["git", "init", "-q", repo], check=True)
        with open(os.path.join(repo, "a.txt"), "w") as f:
            f.write("a\n")
        subprocess.run(git + ["-C", repo, "add", "a.txt"], check=True)
        subprocess.run(git + ["-C", repo, "commit", "-qm", "a"], check=True)
        out = self.home.baton("run", "--json", "--worktree", "--no-snapshot", "-C", repo,
                              "work in a worktree")  # no snapshots: test_snapshot_option
        conv = json.loads(out.stdout.decode().splitlines()[0])["conversation"]
        path = self.detail(conv)["conversation"]["worktree"]["path"]
        with open(os.path.join(path, "new.txt"), "w") as f:
            f.write("work only the worktree holds\n")

        def cli_refusal(*args):
            p = self.home.baton(*args, check=False)
            self.assertEqual(p.returncode, 2, p.stderr)
            err = p.stderr.decode()
            self.assertTrue(err.startswith("baton: "), err)
            return err[len("baton: "):].rstrip("\n")

        said = cli_refusal("rm", "-y", conv)
        self.assertIn("keeps its worktree", said)
        doc = self.error("DELETE", f"/v1/conversations/{conv}", CONV, 409, "conflict")
        self.assertEqual(doc["error"]["message"], said)
        self.assertTrue(os.path.isfile(os.path.join(path, "new.txt")))
        self.assertEqual(self.detail(conv)["conversation"]["id"], conv)
        subprocess.run(["git", "-C", repo, "worktree", "remove", "--force", path], check=True)
        said = cli_refusal("handoff", "--print", conv)
        self.assertIn("worktree", said)
        self.assertIn("is gone", said)
        for body in (None, {"tmux": True}):
            with self.subTest(handoff=body):
                doc = self.error("POST", f"/v1/conversations/{conv}/handoff",
                                    CONV + "/handoff", 409, "conflict", body)
                self.assertEqual(doc["error"]["message"], said)
        self.assertEqual(self.detail(conv)["conversation"]["status"], "active")
        # a cancel through the CLI of a turn the API started: as the API's
        self.home.gate.hold()
        held, run = self.create("cancelled from a terminal")
        self.held(held, run)
        p = self.home.baton("cancel", held)
        self.assertIn(f"run {run} of {held} ended cancelled", p.stderr.decode())
        d = self.idle(held)
        (r,) = d["runs"]
        self.assertEqual((r["state"], r["cancel_requested"]), ("cancelled", True))
        self.assertEqual([(m["role"], m["state"]) for m in d["messages"]],
                         [("user", "complete"), ("assistant", "cancelled")])
        said = cli_refusal("cancel", held)
        doc = self.error("POST", f"/v1/conversations/{held}/cancel", CONV + "/cancel", 409,
                            "conflict")
        self.assertEqual(doc["error"]["message"], said)
        self.home.gate.release()
        # and rm, once it may: the same removal both ways
        p = self.home.baton("rm", "-y", conv)
        self.assertIn(f"removed conversation {conv}", p.stdout.decode())
        # no turn made snapshots: rm made no store for them either
        self.assertFalse(os.path.exists(os.path.join(self.home.home, "snapshots")))
        _, doc = self.call("DELETE", f"/v1/conversations/{held}", CONV, 200)
        self.assertEqual(doc, {"removed": held})
        ids = [c["id"] for c in self.home.ls()]
        self.assertNotIn(conv, ids)
        self.assertNotIn(held, ids)

    def test_not_found(self):
        cases = [("GET", "", None), ("DELETE", "", None), ("POST", "/messages", {"prompt": "x"}),
                 ("POST", "/cancel", None), ("POST", "/retry", None),
                 ("POST", "/handoff", None), ("GET", "/events", None),
                 ("DELETE", "/queue/1", None)]
        for method, tail, body in cases:
            with self.subTest(route=f"{method} {tail}"):
                template = CONV + ("/queue/{n}" if tail.startswith("/queue") else tail)
                self.error(method, f"/v1/conversations/{UNKNOWN}{tail}", template, 404,
                           "not_found", body)
        for path in ("/v1/nothing", "/v2/coders", "/v1", "/v1/conversations/x/y/z",
                     "/v1/coders/codex"):
            with self.subTest(path=path):
                self.api.check_error(self.client.get(path), 404, "not_found")

    def test_method_not_allowed(self):
        conv, _ = self.create("methods")
        self.idle(conv)
        cases = [("DELETE", "/v1/coders", {"GET"}), ("PUT", "/v1/conversations", {"GET", "POST"}),
                 ("GET", "/v1/login", {"POST"}), ("POST", "/v1/openapi.json", {"GET"}),
                 ("GET", f"/v1/conversations/{conv}/cancel", {"POST"}),
                 ("PATCH", f"/v1/conversations/{conv}", {"GET", "DELETE"}),
                 ("GET", f"/v1/conversations/{conv}/messages", {"POST"}),
                 ("POST", f"/v1/conversations/{conv}/events", {"GET"}),
                 ("GET", f"/v1/conversations/{conv}/queue/1", {"DELETE"}),
                 ("POST", "/v1/events", {"GET"})]
        for method, path, allow in cases:
            with self.subTest(route=f"{method} {path}"):
                r = self.client.request(method, path)
                self.api.check_error(r, 405, "method_not_allowed")
                got = {m.strip() for m in (r.header("allow") or "").split(",") if m.strip()}
                self.assertEqual(got - {"HEAD", "OPTIONS"}, allow, r.headers)

    def test_openapi_served(self):
        _, doc = self.call("GET", "/v1/openapi.json", "/v1/openapi.json", 200)
        self.assertEqual(doc, self.api.doc)
        # without the token too: it holds no data
        _, doc = self.call("GET", "/v1/openapi.json", "/v1/openapi.json", 200, token=None)
        self.assertEqual(doc, self.api.doc)

    def test_page(self):
        r = self.client.get("/", token=None)
        self.api.check(r, "GET", "/", 200)
        self.assertTrue(r.body.lower().startswith(b"<!doctype html"), r.body[:100])
        self.assertNotIn(self.serve.token.encode(), r.body)  # it holds no data

    def test_html_of_messages(self):
        conv, _ = self.create("**bold** and <script>alert(1)</script> `code`")
        self.idle(conv)
        d = self.detail(conv, "?html=1")
        user = d["messages"][0]["html"]
        self.assertIn("<strong>bold</strong>", user)
        self.assertIn("<code>code</code>", user)
        self.assertNotIn("<script", user)
        self.assertIn("&lt;script&gt;", user)
        self.assertIn("banana", d["messages"][1]["html"])
        self.assertNotIn("html", self.detail(conv, "?html=0")["messages"][0])
        for q in ("html=2", "html=yes", "html="):
            with self.subTest(query=q):
                self.error("GET", f"/v1/conversations/{conv}?{q}", CONV, 400, "bad_request")


if __name__ == "__main__":
    servetest.main()
