#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""serve-work: what the CLI does with a conversation's work, through the
API (docs/api.md): a new conversation in a git worktree of its own
(`run --worktree [--branch]`), a turn's and a conversation's changes
(`baton diff`), keep (`baton keep [--prune]`), fan-out (`run -c a,b,c`)
and groups (`baton group ls|show`).

codex is the fake coder run after the home's edit.sh (what a test writes
there) in the turn's directory, so a turn changes files as a coder would.
Every response is checked against src/serve/web/openapi.json; each object is
compared with what the CLI prints for the same home.
"""
import json
import os
import subprocess

import servetest
from servetest import ServeCase, wait_for

LIST = "/v1/conversations"
UNKNOWN = "0mx66kzscsm2vv13gfc3ti"  # a well-formed id nothing has
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]


class Work(ServeCase):
    home_name = "work"

    @classmethod
    def setUpClass(cls):
        from contract import Contract
        cls.api = Contract(servetest.OPENAPI)
        cls.home = servetest.Home(cls.home_name)
        try:
            cls.edit = os.path.join(cls.home.dir, "edit.sh")
            codex = os.path.join(cls.home.dir, "codex")
            with open(codex, "w") as f:
                f.write(f"#!/bin/sh\n[ \"$1\" = app-server ] && [ -f '{cls.edit}' ] && "
                        f"sh '{cls.edit}'\nexec '{servetest.FAKE}' \"$@\"\n")
            os.chmod(codex, 0o755)
            cls.home.env["BATON_CODEX_BIN"] = codex
            cls.serve = cls.home.serve()
        except BaseException:
            cls.home.cleanup(failed=True)
            raise
        cls.client = cls.serve.client()

    def setUp(self):
        super().setUp()
        self.edits("")

    def edits(self, script):
        with open(self.edit, "w") as f:
            f.write(script)

    def repo(self, name):
        """A repository with one commit on main."""
        repo = os.path.join(self.home.dir, name)
        subprocess.run(["git", "init", "-q", "-b", "main", repo], check=True)
        with open(os.path.join(repo, "a.txt"), "w") as f:
            f.write("one\ntwo\n")
        subprocess.run(GIT + ["-C", repo, "add", "a.txt"], check=True)
        subprocess.run(GIT + ["-C", repo, "commit", "-qm", "a"], check=True)
        return repo

    def create_in(self, repo, prompt, **fields):
        conv, run = self.create(prompt, cwd=repo, **fields)
        d = self.idle(conv)
        self.assertEqual(d["runs"][-1]["state"], "completed")
        return conv, d["conversation"]

    def diff(self, conv, turn=None, status=200):
        target = f"{LIST}/{conv}/diff" if turn is None else f"{LIST}/{conv}/turns/{turn}/diff"
        template = ("/v1/conversations/{id}/diff" if turn is None
                    else "/v1/conversations/{id}/turns/{n}/diff")
        _, doc = self.call("GET", target, template, status)
        return doc

    def not_allowed(self, method, path, allow):
        r = self.client.request(method, path)
        self.api.check_error(r, 405, "method_not_allowed")
        got = {m.strip() for m in (r.header("allow") or "").split(",") if m.strip()}
        self.assertEqual(got - {"HEAD", "OPTIONS"}, allow, r.headers)

    def cli_json(self, *args):
        return json.loads(self.home.baton(*args).stdout)

    # --- worktree ---------------------------------------------------------

    def test_worktree(self):
        repo = self.repo("wt")
        conv, c = self.create_in(repo, "in a worktree", worktree=True)
        wt = c["worktree"]
        self.assertEqual(wt["path"], os.path.join(self.home.home, "worktrees", conv[:12]))
        self.assertEqual((wt["branch"], wt["base"]), (f"baton/{conv[:12]}", "main"))
        self.assertEqual(c["cwd"], wt["path"])
        self.assertTrue(os.path.isfile(os.path.join(wt["path"], "a.txt")))
        (ls,) = [x for x in self.home.ls() if x["id"] == conv]
        self.assertEqual(ls["worktree"], wt)
        # a branch of its own name; the same again is refused (it exists),
        # and nothing is stored for it
        conv2, c2 = self.create_in(repo, "on my branch", worktree=True, branch="topic/mine")
        self.assertEqual(c2["worktree"]["branch"], "topic/mine")
        before = self.home.ls()
        self.error("POST", LIST, LIST, 409, "conflict",
                   {"prompt": "x", "cwd": repo, "worktree": True, "branch": "topic/mine"})
        self.error("POST", LIST, LIST, 400, "bad_request",
                   {"prompt": "x", "cwd": repo, "branch": "b"})  # needs worktree
        self.error("POST", LIST, LIST, 400, "bad_request",
                   {"prompt": "x", "cwd": repo, "worktree": "yes"})
        e = self.error("POST", LIST, LIST, 400, "bad_request",
                       {"prompt": "x", "cwd": self.home.project, "worktree": True})  # no repo
        # said in the API's words: the service's message names no CLI option
        self.assertRegex(e["error"]["message"], r"^a worktree needs a git repository: /.* is not in one$")
        self.assertEqual(self.home.ls(), before)

    # --- diff -----------------------------------------------------------------

    def test_turn_diff(self):
        repo = self.repo("diff")
        self.edits("printf 'hello <b>world</b>\\n' > new.txt\nprintf 'one\\n' > a.txt\n")
        conv, c = self.create_in(repo, "first turn", worktree=True)
        one = self.diff(conv, 1)
        self.assertEqual((one["conversation"], one["turn"], one["shared_dir"]), (conv, 1, None))
        self.assertEqual(one["changes"], {
            "files": [{"path": "a.txt", "status": "modified", "added": 0, "removed": 1},
                      {"path": "new.txt", "status": "added", "added": 1, "removed": 0}],
            "added": 1, "removed": 1})
        cli = self.cli_json("diff", "--json", "--turn", "1", conv)
        self.assertEqual({k: one[k] for k in cli}, cli)
        # the patch is the one `baton diff` prints (no colour: no terminal)
        patch = self.home.baton("diff", "--turn", "1", conv).stdout.decode()
        self.assertEqual(one["patch"], patch)
        self.assertIn("+hello <b>world</b>\n", one["patch"])
        self.assertFalse(one["patch_truncated"])
        # a second turn: its own changes; the whole conversation: both
        self.edits("rm new.txt\nprintf 'three\\n' >> a.txt\n")
        self.send(conv, "second turn")
        self.idle(conv)
        two = self.diff(conv, 2)
        self.assertEqual([(f["path"], f["status"]) for f in two["changes"]["files"]],
                         [("a.txt", "modified"), ("new.txt", "deleted")])
        self.assertEqual(two["from"], one["to"])
        whole = self.diff(conv)
        self.assertIsNone(whole["turn"])
        self.assertEqual((whole["from"], whole["to"]), (one["from"], two["to"]))
        self.assertEqual(whole["changes"], self.cli_json("diff", "--json", conv)["changes"])
        self.assertEqual(whole["patch"], self.home.baton("diff", conv).stdout.decode())
        # a turn that changed nothing: no files, an empty patch
        self.edits("")
        self.send(conv, "third turn")
        self.idle(conv)
        three = self.diff(conv, 3)
        self.assertEqual((three["changes"]["files"], three["patch"]), ([], ""))
        self.assertEqual(three["from"], three["to"])
        # no such turn; not a turn number
        self.error("GET", f"{LIST}/{conv}/turns/4/diff", "/v1/conversations/{id}/turns/{n}/diff",
                   404, "not_found")
        for bad in ("0", "01", "x", "-1", "1.0"):
            self.error("GET", f"{LIST}/{conv}/turns/{bad}/diff",
                       "/v1/conversations/{id}/turns/{n}/diff", 404, "not_found")
        self.error("GET", f"{LIST}/{UNKNOWN}/diff", "/v1/conversations/{id}/diff", 404,
                   "not_found")
        self.not_allowed("POST", f"{LIST}/{conv}/diff", {"GET"})

    def test_diff_shared_and_unrecorded(self):
        repo = self.repo("shared")
        self.edits("printf 'x\\n' > x.txt\n")
        conv, _ = self.create_in(repo, "in the directory itself")
        d = self.diff(conv, 1)
        self.assertEqual(d["shared_dir"], repo)  # the changes may hold others' edits
        self.assertEqual([f["path"] for f in d["changes"]["files"]], ["x.txt"])
        # not in a repository: nothing recorded, said as the CLI says it
        plain, _ = self.create_in(self.home.project, "outside git")
        r = self.error("GET", f"{LIST}/{plain}/turns/1/diff",
                       "/v1/conversations/{id}/turns/{n}/diff", 409, "conflict")
        p = self.home.baton("diff", "--turn", "1", plain, check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn(r["error"]["message"], p.stderr.decode())
        self.assertIn("no changes were recorded", r["error"]["message"])

    # --- keep -------------------------------------------------------------------

    def test_keep(self):
        repo = self.repo("keep")
        self.edits("printf 'kept\\n' > kept.txt\n")
        conv, c = self.create_in(repo, "work to keep", worktree=True)
        path = c["worktree"]["path"]
        _, k = self.call("POST", f"{LIST}/{conv}/keep", "/v1/conversations/{id}/keep", 200)
        self.assertEqual((k["conversation"], k["branch"], k["base"], k["how"], k["committed"]),
                         (conv, f"baton/{conv[:12]}", "main", "fast-forward", True))
        self.assertEqual((k["pruned"], k["pruned_others"], k["notes"]), (False, [], []))
        # main is checked out there: its files updated (libgit2's workdir: a final /)
        self.assertEqual(os.path.normpath(k["checkout"]), repo)
        head = subprocess.run(["git", "-C", repo, "rev-parse", "main"], capture_output=True,
                              check=True).stdout.decode().strip()
        self.assertEqual(k["commit"], head)
        with open(os.path.join(repo, "kept.txt")) as f:
            self.assertEqual(f.read(), "kept\n")
        # again, pruning: nothing more to bring, the worktree and branch go
        _, k = self.call("POST", f"{LIST}/{conv}/keep", "/v1/conversations/{id}/keep", 200,
                         {"prune": True})
        self.assertEqual((k["how"], k["committed"], k["pruned"]), ("none", False, True))
        self.assertFalse(os.path.exists(path))
        branches = subprocess.run(["git", "-C", repo, "branch", "--list", "baton/*"],
                                  capture_output=True, check=True).stdout
        self.assertEqual(branches, b"")
        # refusals: its branch gone (pruned), no worktree of its own, a bad
        # body, a running turn; each as `baton keep` says it
        r = self.error("POST", f"{LIST}/{conv}/keep", "/v1/conversations/{id}/keep", 409,
                       "conflict")
        self.assertIn(f"its branch baton/{conv[:12]} is gone", r["error"]["message"])
        plain, _ = self.create_in(repo, "no worktree")
        r = self.error("POST", f"{LIST}/{plain}/keep", "/v1/conversations/{id}/keep", 409,
                       "conflict")
        self.assertIn("no worktree of its own", r["error"]["message"])
        p = self.home.baton("keep", plain, check=False)
        self.assertEqual(p.returncode, 2)
        self.assertIn(r["error"]["message"], p.stderr.decode())
        self.error("POST", f"{LIST}/{conv}/keep", "/v1/conversations/{id}/keep", 400,
                   "bad_request", {"prune": 1})
        self.error("POST", f"{LIST}/{conv}/keep", "/v1/conversations/{id}/keep", 400,
                   "bad_request", {"force": True})
        self.not_allowed("GET", f"{LIST}/{conv}/keep", {"POST"})
        self.home.gate.hold()
        busy, run = self.create("held", cwd=repo, worktree=True)
        self.held(busy, run)
        self.error("POST", f"{LIST}/{busy}/keep", "/v1/conversations/{id}/keep", 409, "busy")
        self.home.gate.release()
        self.idle(busy)

    # --- fan-out and groups ---------------------------------------------------

    def test_fanout(self):
        repo = self.repo("fan")
        self.edits("printf 'by %s\\n' \"$$\" > mine.txt\n")
        body = {"prompt": "one prompt, two coders", "cwd": repo, "worktree": True,
                "coders": ["codex", "codex", "pi"]}
        r, doc = self.call("POST", LIST, LIST, 201, body)
        gid = doc["group"]["id"]
        self.assertEqual(r.header("location"), f"/v1/groups/{gid}")
        self.assertEqual([m["coder"] for m in doc["conversations"]], ["codex", "codex", "pi"])
        a, b, pi = doc["conversations"]
        for m in (a, b):
            self.assertIsNone(m["error"])
            self.assertIsNotNone(m["run"])
        self.assertEqual((pi["conversation"], pi["run"], pi["error"]["kind"]),
                         (None, None, "not_installed"))
        self.assertEqual(doc["group"]["name"], "one prompt, two coders")
        self.assertEqual(sorted(m["conversation"] for m in doc["group"]["members"]),
                         sorted([a["conversation"], b["conversation"]]))
        for m in (a, b):
            d = self.idle(m["conversation"])
            self.assertEqual(d["conversation"]["group"], gid)
            self.assertIsNotNone(d["conversation"]["worktree"])
            self.assertEqual(d["runs"][0]["state"], "completed")
        # the group as `baton group show --json` and `group ls --json` say
        _, g = self.call("GET", f"/v1/groups/{gid}", "/v1/groups/{gid}", 200)
        self.assertEqual(g, self.cli_json("group", "show", "--json", gid) | {
            "members": g["members"]})
        cli = self.cli_json("group", "show", "--json", gid)["members"]
        strip = lambda ms: [{k: v for k, v in m.items() if k != "duration_ms"} for m in ms]
        self.assertEqual(strip(g["members"]), strip(cli))
        self.assertEqual([m["files"] for m in g["members"]], [1, 1])
        self.assertEqual([m["status"] for m in g["members"]], ["completed", "completed"])
        _, gs = self.call("GET", "/v1/groups", "/v1/groups", 200)
        out = self.home.baton("group", "ls", "--json").stdout.decode().splitlines()
        self.assertEqual(gs["groups"], [json.loads(x) for x in out])
        (listed,) = [x for x in gs["groups"] if x["id"] == gid]
        self.assertEqual(listed["members"], 2)
        # keep one result with prune: the other's worktree goes with it
        _, k = self.call("POST", f"{LIST}/{a['conversation']}/keep",
                         "/v1/conversations/{id}/keep", 200, {"prune": True})
        self.assertEqual(k["pruned_others"], [b["conversation"]])
        self.assertFalse(os.path.exists(self.idle(b["conversation"])["conversation"]["worktree"]
                                        ["path"]))

    def test_fanout_refused(self):
        before = self.home.ls()
        groups = self.home.baton("group", "ls", "--json").stdout
        p = self.home.project
        for body, status, kind in [
                ({"prompt": "x", "cwd": p, "coders": ["pi"]}, 422, "not_installed"),
                ({"prompt": "x", "cwd": p, "coders": ["codex", "nosuch"]}, 400, "bad_request"),
                ({"prompt": "x", "cwd": p, "coders": []}, 400, "bad_request"),
                ({"prompt": "x", "cwd": p, "coders": "codex"}, 400, "bad_request"),
                ({"prompt": "x", "cwd": p, "coders": ["codex", 1]}, 400, "bad_request"),
                ({"prompt": "x", "cwd": p, "coders": ["codex"] * 17}, 400, "bad_request"),
                ({"prompt": "x", "cwd": p, "coders": ["codex"], "coder": "codex"}, 400,
                 "bad_request"),
                ({"prompt": "x", "cwd": p, "coders": ["codex"], "worktree": True,
                  "branch": "b"}, 400, "bad_request"),
                ({"cwd": p, "coders": ["codex"]}, 400, "bad_request")]:
            with self.subTest(body=body):
                self.error("POST", LIST, LIST, status, kind, body)
        self.assertEqual(self.home.ls(), before)  # nothing made for any of them
        self.assertEqual(self.home.baton("group", "ls", "--json").stdout, groups)

    def test_groups_not_found(self):
        self.error("GET", f"/v1/groups/{UNKNOWN}", "/v1/groups/{gid}", 404, "not_found")
        self.error("GET", "/v1/groups/abc", "/v1/groups/{gid}", 404, "not_found")
        self.not_allowed("POST", "/v1/groups", {"GET"})
        self.not_allowed("DELETE", f"/v1/groups/{UNKNOWN}", {"GET"})


if __name__ == "__main__":
    servetest.main()
