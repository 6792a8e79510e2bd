#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""serve-web-work: the page's worktree, turn changes, keep, fan-out and
group view in headless chromium (test_web.BrowserCase), against the real
server: the new form's "worktree" box starts a conversation in a
worktree of its own; a turn's "Changes" fold lists the files the turn
changed and shows the patch as text (markup in a changed file stays
text); Keep brings the work into main; "several coders" fans one prompt
out to codex and gemini and opens the group side by side, whose "Keep
this one" keeps one result and drops the other's worktree.

codex is the fake coder run after the home's edit.sh in the turn's
directory (so a turn changes files); gemini is the scripted ACP agent
(tests/fake-coder/fake-acp.c). Skipped as serve-web is, without
chromium, chromedriver or selenium.
"""
import os
import subprocess

import servetest
from servetest import ANSWER

from test_web import BrowserCase, browser  # noqa: E402 (it skips without selenium or chromium)
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]
FAKE_ACP = os.environ.get("BATON_FAKE_ACP") or os.path.join(os.path.dirname(servetest.FAKE),
                                                          "fake-acp")
# a changed file's line that must reach the page as text, never as elements
MARKUP = '<img src=x onerror="window.__pwned=1"><b>bold</b>'


class WebWork(BrowserCase):
    home_name = "web-work"

    @classmethod
    def setUpClass(cls):
        from contract import Contract
        if not os.access(FAKE_ACP, os.X_OK):
            raise AssertionError(f"no fake-acp at {FAKE_ACP}")
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
            cls.home.env["BATON_GEMINI_BIN"] = FAKE_ACP
            cls.serve = cls.home.serve()
            cls.client = cls.serve.client()
            cls.d = browser(1280, 800)
        except BaseException:
            cls.home.cleanup(failed=True)
            raise
        cls.d.set_script_timeout(10)

    def repo(self, name):
        repo = os.path.join(self.home.dir, name)
        subprocess.run(["git", "init", "-q", "-b", "main", repo], check=True)
        with open(os.path.join(repo, "a.txt"), "w") as f:
            f.write("one\n")
        subprocess.run(GIT + ["-C", repo, "add", "a.txt"], check=True)
        subprocess.run(GIT + ["-C", repo, "commit", "-qm", "a"], check=True)
        return repo

    def edits(self, script):
        with open(self.edit, "w") as f:
            f.write(script)

    def new_form(self, repo):
        self.el("new-btn").click()
        self.until(lambda: self.q("#new-coder option"), "the coders")
        cwd = self.el("new-cwd")
        cwd.clear()
        cwd.send_keys(repo)

    def test_1_worktree_changes_keep(self):
        repo = self.repo("page")
        self.edits(f"printf '%s\\n' '{MARKUP}' > page.txt\n")
        self.sign_in()
        self.new_form(repo)
        self.assertFalse(self.el("new-worktree").is_selected())  # the default
        self.el("new-worktree").click()
        self.el("new-prompt").send_keys("change a file", Keys.ENTER)
        self.until(lambda: "#c=" in self.d.current_url, "the new conversation")
        conv = self.d.current_url.split("#c=")[1]
        self.until(lambda: self.answers() == [ANSWER], "the answer")
        self.until(lambda: f"baton/{conv[:12]}" in self.el("conv-meta").text, "the branch")
        d = self.detail_raw(conv)
        self.assertEqual(d["conversation"]["worktree"]["branch"], f"baton/{conv[:12]}")
        # the turn's changes: closed until asked, then the files and the patch
        (box,) = self.until(lambda: self.q("details.changes"), "the turn's changes")
        self.assertEqual(box.get_attribute("data-turn"), "1")
        self.until(lambda: self.q("details.changes summary")[0].text ==
                   "Changes of turn 1: 1 file +1 −0", "the summary of turn.completed's changes")
        box.find_element(By.CSS_SELECTOR, "summary").click()
        self.until(lambda: self.q("details.changes .files li"), "the changed files")
        self.assertEqual(self.read(lambda: [li.get_attribute("textContent") for li in self.q("details.changes .files li")]),
                         ["A page.txt +1 −0"])
        patch = self.read(lambda: self.q("details.changes pre.patch")[0].text)
        self.assertIn(f"+{MARKUP}", patch)
        self.assertEqual(self.read(lambda: [e.text for e in self.q("pre.patch .add")]),
                         [f"+{MARKUP}"])
        self.assertEqual(self.q(".transcript img, .transcript b"), [])  # text, never markup
        self.assertIsNone(self.d.execute_script("return window.__pwned"))
        self.shot("desktop-turn-changes")
        # a second turn: its own fold; the first one stays open across redraws
        self.edits("printf 'two\\n' >> a.txt\n")
        self.el("prompt").send_keys("and another", Keys.ENTER)
        self.until(lambda: len(self.q("details.changes")) == 2, "the second turn's changes")
        self.assertTrue(self.read(lambda: self.q("details.changes")[0].get_attribute("open")
                                  is not None))
        self.q("details.changes")[1].find_element(By.CSS_SELECTOR, "summary").click()
        self.until(lambda: [li.get_attribute("textContent") for li in self.q("details.changes")[1].find_elements(
            By.CSS_SELECTOR, ".files li")] == ["M a.txt +1 −0"], "turn 2's files")
        # a turn that changed nothing has no fold
        self.edits("")
        self.el("prompt").send_keys("and nothing", Keys.ENTER)
        self.until(lambda: len(self.answers()) == 3, "the third answer")
        self.assertEqual(len(self.q("details.changes")), 2)
        # loaded again: the earlier turns' events come after the transcript
        # is drawn (their runs fetched one at a time), and their folds then
        # say what changed, not only that something may have
        self.d.refresh()  # a new page: the token is kept for the tab
        self.open_conv(conv)
        self.until(lambda: [e.text for e in self.q("details.changes summary")] ==
                   ["Changes of turn 1: 1 file +1 −0", "Changes of turn 2: 1 file +1 −0"],
                   "the earlier turns' summaries, once their events are in")
        # Keep: the work into main, said as baton keep says it
        self.until(lambda: self.shown("keep-btn") and self.el("keep-btn").is_enabled(), "Keep")
        self.el("keep-btn").click()
        self.until(lambda: self.shown("keep-box"), "what keep did")
        said = self.el("keep-said").text
        self.assertIn(f"committed the worktree's changes on baton/{conv[:12]}", said)
        self.assertIn(f"fast-forwarded main to baton/{conv[:12]}", said)
        with open(os.path.join(repo, "page.txt")) as f:
            self.assertEqual(f.read(), MARKUP + "\n")
        self.shot("desktop-kept")
        self.el("keep-prune").click()
        self.alert().accept()
        self.until(lambda: "removed the worktree and branch" in self.el("keep-said").text,
                   "pruned")
        self.assertFalse(os.path.exists(d["conversation"]["worktree"]["path"]))

    def test_2_fanout_group(self):
        repo = self.repo("fan")
        self.edits("printf 'codex was here\\n' > codex.txt\n")
        self.sign_in()
        self.new_form(repo)
        if not self.el("new-worktree").is_selected():
            self.el("new-worktree").click()
        self.el("new-fan").click()
        self.assertEqual(self.el("new-coder").get_attribute("multiple"), "true")
        for o in self.q("#new-coder option"):
            if o.get_attribute("value") in ("codex", "gemini") and not o.is_selected():
                o.click()  # a multiple select: a click adds the option
        self.el("new-prompt").send_keys("one prompt, two coders", Keys.ENTER)
        self.until(lambda: "#g=" in self.d.current_url, "the group")
        gid = self.d.current_url.split("#g=")[1]
        self.until(lambda: self.el("group-title").text == "one prompt, two coders", "its name")

        def rows():
            return [[td.text for td in tr.find_elements(By.CSS_SELECTOR, "td")][:3]
                    for tr in self.q("#group-rows tr")]
        self.until(lambda: sorted(r[0] + ":" + r[2] for r in rows()) ==
                   ["codex:completed", "gemini:completed"], "both members completed")
        g = self.client.get(f"/v1/groups/{gid}").json()
        by = {m["coder"]: m for m in g["members"]}
        self.assertEqual(by["codex"]["files"], 1)
        self.shot("desktop-group")
        # one conversation's page links back to its group
        self.d.execute_script("location.hash = arguments[0]", f"#c={by['codex']['conversation']}")
        self.until(lambda: self.q("#conv-meta a.group-link"), "the group link")
        self.q("#conv-meta a.group-link")[0].click()
        self.until(lambda: self.shown("group-view") and rows(), "the group again")
        # keep codex's result: gemini's worktree goes
        (keep,) = [tr.find_element(By.CSS_SELECTOR, "button.keep") for tr in self.q("#group-rows tr")
                   if tr.get_attribute("data-conv") == by["codex"]["conversation"]]
        keep.click()
        self.alert().accept()
        self.until(lambda: self.shown("group-note"), "what keep did")
        self.assertIn("fast-forward of main", self.el("group-note").text)
        self.assertIn("removed 1 other worktree", self.el("group-note").text)
        self.assertFalse(os.path.exists(by["gemini"]["worktree"]["path"]))
        with open(os.path.join(repo, "codex.txt")) as f:
            self.assertEqual(f.read(), "codex was here\n")


if __name__ == "__main__":
    servetest.main()
