#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""serve-web-live-codex: the page of `baton serve` in headless chromium
(test_web.BrowserCase) with the real codex CLI (0.171.0,
BATON_TEST_CODEX_BIN) against the local stand-in model, as
serve-live-codex runs it.

One story, as a user clicks it: a new conversation from the form, the
stand-in's answer rendered as markdown; the model's reasoning
([[reasoning]]) as one line of activity, its text when opened; a slow turn ([[slow]]) streaming
as text, a follow-up typed while it runs shown queued, the slow turn
cancelled with its partial answer kept and the follow-up still queued (a
queue waits after a cancelled turn), then sent first with the next
prompt, resuming the same codex thread; the search box finding the
conversation by a word of the follow-up and nothing for a word no one
wrote; and (WebLiveCodexSteer) a message steered into a slow turn with
the page's Steer. Screenshots go to build/web-shots (BATON_WEB_SHOTS=DIR: there).

Skipped (exit 77) without BATON_TEST_CODEX_BIN, chromium, chromedriver or
python3-selenium.
"""
import json
import os
import sys

import servetest

CODEX_BIN = os.environ.get("BATON_TEST_CODEX_BIN", "")
if not CODEX_BIN or not os.access(CODEX_BIN, os.X_OK):
    servetest.skip("BATON_TEST_CODEX_BIN does not name a codex binary "
                   "(bash tests/scripts/install-codex.sh prints the pinned one's path)")

from test_web import BrowserCase  # noqa: E402 (it skips without selenium or chromium)
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402

FIRST = "Say hello banana"
FIRST_ANSWER = f"Hello! You said: {FIRST}"
FOLLOW_UP = "And again, kumquat?"
NEXT = "then go on"
REASON = "[[reasoning]] why is the sky blue"


class WebLiveCodex(BrowserCase):
    home_name = "web-live-codex"
    codex_bin = CODEX_BIN

    def streaming_text(self):
        """The text of the answer streaming now, "" if none is."""
        return self.read(lambda: "".join(
            e.text for e in self.q(".msg.assistant.streaming .body.plain")))

    def listed(self):
        return self.read(lambda: [li.get_attribute("data-id") for li in self.q(".conv-item")])

    def test_story(self):
        self.sign_in()
        # a new conversation from the form, through the real codex
        self.el("new-btn").click()
        self.until(lambda: self.q("#new-coder option"), "the coders")
        self.assertEqual(self.el("new-coder").get_attribute("value"), "codex")
        cwd = self.el("new-cwd")
        cwd.clear()
        cwd.send_keys(self.home.project)
        self.el("new-prompt").send_keys(FIRST, Keys.ENTER)
        self.until(lambda: "#c=" in self.d.current_url, "the new conversation")
        conv = self.d.current_url.split("#c=")[1]
        self.until(lambda: self.answers() == [FIRST_ANSWER], "codex's rendered answer", timeout=60)
        self.until(lambda: not self.shown("working"), "the first turn to end")
        native = self.detail_raw(conv)["conversation"]["native_session_id"]
        self.assertTrue(native)
        self.shot("live-first-answer")

        # the model's reasoning: one line of tool activity, its text when opened
        self.el("prompt").send_keys(REASON, Keys.ENTER)
        self.until(lambda: len(self.answers()) == 2 and not self.shown("working"),
                   "the reasoned answer", timeout=60)
        self.assertEqual(self.answers()[-1], f"Hello! You said: {REASON}")
        def thought():
            (t,) = [t for t in self.q(".tool") if t.get_attribute("data-kind") == "reasoning"]
            return t

        def part(css):
            return thought().find_element(By.CSS_SELECTOR, css)
        self.assertEqual(self.read(lambda: part(".kind").text), "thought")
        self.assertEqual(self.read(lambda: part(".what").text), f"Thinking about: {REASON}")
        self.read(lambda: part("summary").click())
        self.until(lambda: part(".out").text == f"Thinking about: {REASON}",
                   "the reasoning's text")
        self.shot("live-reasoning")

        # a slow turn streams as text; a follow-up typed meanwhile is queued
        box = self.el("prompt")
        box.send_keys("[[slow]]", Keys.ENTER)
        self.until(lambda: "tick 003." in self.streaming_text(),
                   "the slow answer streaming", timeout=60)
        self.assertTrue(self.shown("working"))
        self.assertEqual(self.el("send-btn").text, "Queue")
        box.send_keys(FOLLOW_UP, Keys.ENTER)
        self.until(lambda: self.shown("queue") and self.q("#queue li"), "the queued follow-up")
        (text,) = self.read(lambda: [li.text for li in self.q("#queue li")])
        self.assertIn(FOLLOW_UP, text)
        self.shot("live-slow-with-queued")

        # cancelled: the partial answer stays, the follow-up waits
        self.el("cancel-btn").click()
        self.until(lambda: self.el("turn-state").text == "last turn cancelled",
                   "the cancelled turn", timeout=30)
        self.assertFalse(self.shown("working"))
        self.assertIn("tick 001.", self.read(lambda: self.q(".msg.assistant")[-1].text))
        self.assertTrue(self.shown("queue"))
        self.assertIn(FOLLOW_UP, self.read(lambda: self.q("#queue li")[0].text))
        d = self.detail_raw(conv)
        self.assertEqual([q["text"] for q in d["queued"]], [FOLLOW_UP])
        self.assertEqual([r["state"] for r in d["runs"]], ["completed", "completed", "cancelled"])
        self.shot("live-cancelled")

        # the next prompt takes the queued follow-up first, on the same thread
        box.send_keys(NEXT, Keys.ENTER)
        self.until(lambda: not self.shown("queue"), "the queue to empty", timeout=30)
        self.until(lambda: len(self.answers()) == 4 and not self.shown("working"),
                   "the third turn's answer", timeout=60)
        last = self.answers()[-1]
        self.assertTrue(last.startswith("Hello! You said: "), last)
        self.assertLess(last.index(FOLLOW_UP), last.index(NEXT), last)
        d = self.idle_raw(conv)
        self.assertEqual([r["state"] for r in d["runs"]],
                         ["completed", "completed", "cancelled", "completed"])
        self.assertEqual({r["native_session_id"] for r in d["runs"]}, {native})
        self.until(lambda: self.st_of(conv) == "completed", "the list to say completed")
        self.shot("live-queued-then-sent")

        # the search box
        other, _ = self.create("Say something else")
        self.idle_raw(other)
        self.until(lambda: set(self.listed()) >= {conv, other}, "both in the list")
        search = self.el("search")
        search.send_keys("kumquat")
        self.until(lambda: self.listed() == [conv], "the search to find it")
        self.shot("live-search")
        search.clear()
        search.send_keys("zanzibarquux")
        self.until(lambda: self.listed() == [], "a search that finds nothing")
        search.send_keys(Keys.CONTROL, "a")
        search.send_keys(Keys.BACKSPACE)
        self.until(lambda: set(self.listed()) >= {conv, other}, "the whole list again")
        self.assertEqual(self.q(".conv-item .title b"), [])
        print(f"story of {conv}: ok", file=sys.stderr)


class WebLiveCodexSteer(BrowserCase):
    """Steer from the page with the real codex: while a slow answer
    streams, the typed message goes in with Steer (codex turn/steer); the
    stand-in's next request holds it, the turn's answer is its echo, and
    the turn shows it as a steered row; nothing is queued."""

    home_name = "web-live-codex-steer"
    codex_bin = CODEX_BIN

    def test_steer(self):
        self.sign_in()
        conv, run = self.create("first [[slow:25]]")
        self.open_conv(conv)
        self.until(lambda: self.shown("steer-btn") and "tick 002." in self.read(
            lambda: self.q(".msg.assistant")[-1].text), "the slow answer streaming", timeout=60)
        self.el("prompt").send_keys("steer-words-plum")
        self.el("steer-btn").click()
        self.until(lambda: self.answers()[-1:] == ["Hello! You said: steer-words-plum"],
                   "the steer's answer", timeout=60)
        rows = self.read(lambda: [e.text for e in self.q(".tool summary")])
        self.assertTrue(any("steered" in r and "steer-words-plum" in r for r in rows), rows)
        self.until(lambda: not self.shown("steer-btn"), "the turn to end")
        d = self.detail_raw(conv)
        self.assertEqual(d["queued"], [])
        self.assertEqual([r["state"] for r in d["runs"]], ["completed"])
        # the model saw it in that turn: a request after the first holds it
        bodies = [json.dumps(b) for b in self.home.standin.requests()]
        self.assertTrue(any("steer-words-plum" in b for b in bodies))
        self.shot("live-steered")


if __name__ == "__main__":
    if not os.access(servetest.STANDIN, os.X_OK):
        print(f"error: baton-standin is not built: {servetest.STANDIN}", file=sys.stderr)
        sys.exit(1)
    servetest.main()
