#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""serve-web: the page of `baton serve` (src/serve/web/) in a real browser.

Debian's chromium, headless, driven through chromedriver by selenium,
against the real server and the fake coder (servetest.Home): signing in
from the address's fragment (which leaves the address bar, the cookie
HttpOnly) and with the form; a new conversation from the form, its
answer streamed as text while the turn is held and rendered as markdown
when it ends; a follow-up queued and taken back, then one that waits and
is sent; cancel and retry; handoff (the command of `baton handoff
--print`), a forced send to a handed-off conversation, delete; the
server stopped and started again on its port, the page reconnecting and
showing a turn the CLI sends; a turn with a sub-agent, its work shown as
the sub-agent's and never as the answer; the phone layout at 375 px; with
--max-turns 1, a second turn shown waiting, then run. Every prompt
holds markup that must stay text. After each test the browser's console
may hold no Content-Security-Policy refusal and no uncaught error.

Skipped (exit 77) when chromium, chromedriver or python3-selenium is
missing (tests/scripts/deps.sh installs them); a chromium that is there
but does not start fails. Screenshots of each step are saved in
build/web-shots/ (BATON_WEB_SHOTS=DIR: in DIR).
"""
import json
import os
import shutil
import subprocess
import time

import servetest
from servetest import ANSWER, HELD_ANSWER, NATIVE_ID, ServeCase, wait_for

try:
    from selenium import webdriver
    from selenium.common.exceptions import (NoAlertPresentException,
                                            StaleElementReferenceException,
                                            WebDriverException)
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
except ImportError:
    servetest.skip("python3-selenium is not installed (tests/scripts/deps.sh installs it)")

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver") or (
    "/usr/bin/chromedriver" if os.access("/usr/bin/chromedriver", os.X_OK) else None)
if not CHROMIUM or not CHROMEDRIVER:
    servetest.skip("chromium or chromedriver is not installed (tests/scripts/deps.sh "
                   "installs chromium and chromium-driver)")

# screenshots of every step, kept as the run's artifacts: in the tests'
# scratch root (servetest.TMP_ROOT: the build directory or $BATON_CACHE/scratch)
# unless BATON_WEB_SHOTS names another
SHOTS = os.environ.get("BATON_WEB_SHOTS") or os.path.join(servetest.TMP_ROOT, "web-shots")
# chromium writes its crash reports and dconf cache under HOME: a HOME of
# its own in the scratch root, never the user's
BROWSER_HOME = os.path.join(servetest.TMP_ROOT, "web-browser-home")
os.makedirs(BROWSER_HOME, mode=0o700, exist_ok=True)
BROWSER_ENV = {**os.environ, "HOME": BROWSER_HOME, "XDG_CONFIG_HOME": BROWSER_HOME + "/.config",
               "XDG_CACHE_HOME": BROWSER_HOME + "/.cache"}
# a prompt whose markup must reach the page as text, never as elements
MARKUP = 'say <b>hi</b> <img src=x onerror="window.__pwned=1">'


def browser(width, height, phone=False):
    o = webdriver.ChromeOptions()
    o.binary_location = CHROMIUM
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--no-first-run", "--disable-extensions", f"--window-size={width},{height}"):
        o.add_argument(a)
    o.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        d = webdriver.Chrome(service=Service(CHROMEDRIVER, env=BROWSER_ENV), options=o)
    except WebDriverException as e:
        # installed but broken is a failure, not a skip: the browser test
        # would otherwise never run and never say so
        raise AssertionError(f"chromium ({CHROMIUM}) with {CHROMEDRIVER} does not start "
                             f"headless: {e.msg}") from e
    d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                      {"width": width, "height": height, "deviceScaleFactor": 1,
                       "mobile": phone})
    # the clipboard of the copy button, without a permission prompt
    d.execute_cdp_cmd("Browser.grantPermissions",
                      {"permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]})
    return d


class BrowserCase(ServeCase):
    """A ServeCase with a headless chromium on its page (and the page's
    helpers); tests/serve/test_web_live_codex.py uses it too."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        try:
            cls.d = browser(1280, 800)
        except BaseException:
            cls.home.cleanup(failed=True)
            raise
        cls.d.set_script_timeout(10)

    @classmethod
    def tearDownClass(cls):
        try:
            cls.d.quit()
        finally:
            super().tearDownClass()

    def tearDown(self):
        try:
            self.assert_console_clean(self.d)
        finally:
            super().tearDown()

    # --- the browser ---------------------------------------------------

    @property
    def base(self):
        return f"http://127.0.0.1:{self.serve.port}"

    def sign_in(self, d=None):
        d = d or self.d
        d.get(self.serve.url)
        self.until(lambda: d.find_element(By.ID, "app").is_displayed(), "the app", d)

    def until(self, pred, what, d=None, timeout=20):
        """pred()'s first true value; a page in the middle of a redraw
        (an element replaced under us) is just not there yet, and so is
        one not drawn yet (a query's empty list indexed: ASan CI of
        7a07b4f polled a streaming answer before the page drew it)."""
        def safe():
            try:
                return pred()
            except (WebDriverException, IndexError):
                return None
        try:
            return wait_for(safe, timeout, what)
        except AssertionError:
            self.shot(f"timeout-{self._testMethodName}", d)
            raise

    def read(self, fn, timeout=5):
        """fn()'s value, read again while a redraw replaces an element
        under it: the transcript, queue and list are redrawn as events
        come, so an element found a moment ago can be gone (CI of
        49510d8 read a cancelled turn's answer as it was redrawn). fn
        must find its elements itself."""
        end = time.monotonic() + timeout
        while True:
            try:
                return fn()
            except (StaleElementReferenceException, IndexError):
                if time.monotonic() > end:
                    raise
                time.sleep(0.05)

    def q(self, css, d=None):
        return (d or self.d).find_elements(By.CSS_SELECTOR, css)

    def el(self, id_, d=None):
        return (d or self.d).find_element(By.ID, id_)

    def shown(self, id_, d=None):
        return self.el(id_, d).is_displayed()

    def open_conv(self, conv):
        self.d.execute_script("location.hash = arguments[0]", f"#c={conv}")
        self.until(lambda: self.shown("conv-view") and self.q(".msg"), f"conversation {conv}")

    def answers(self):
        """The rendered (markdown) answers of the open conversation."""
        return self.read(lambda: [e.text for e in self.q(".msg.assistant .body.md")])

    def alert(self):
        def present():
            try:
                return self.d.switch_to.alert
            except NoAlertPresentException:
                return None
        return self.until(present, "a confirm dialog")

    def shot(self, name, d=None):
        os.makedirs(SHOTS, exist_ok=True)
        (d or self.d).save_screenshot(os.path.join(SHOTS, f"{name}.png"))

    def assert_console_clean(self, d):
        """No CSP refusal, no uncaught error. Failed loads are not errors
        of the page: the cookie probe's 401, a deliberate 409."""
        bad = []
        for e in d.get_log("browser"):
            msg = e.get("message", "")
            if "Content Security Policy" in msg or "Refused to" in msg or "Uncaught" in msg:
                bad.append(msg)
            elif e.get("level") == "SEVERE" and "Failed to load resource" not in msg:
                bad.append(msg)
        self.assertEqual(bad, [], "the browser's console")

    def assert_markup_is_text(self):
        self.assertEqual(self.q(".transcript b, .transcript img, .conv-list b, .conv-list img"),
                         [])
        self.assertIsNone(self.d.execute_script("return window.__pwned"))

    def st_of(self, conv):
        """The status dot of conv in the list."""
        def dot():
            for li in self.q(".conv-item"):
                if li.get_attribute("data-id") == conv:
                    return li.find_element(By.CSS_SELECTOR, ".st").get_attribute("data-state")
            return None
        return self.read(dot)

    # --- requests without the contract's checks (the page's view) ------

    def detail_raw(self, conv):
        r = self.client.get(f"/v1/conversations/{conv}")
        self.assertEqual(r.status, 200, r)
        return r.json()

    def idle_raw(self, conv):
        return wait_for(lambda: (lambda d: None if d["running"] or d["queued"] else d)(
            self.detail_raw(conv)), 30, f"conversation {conv} to settle")

    def create(self, prompt, status=201, **fields):
        body = {"prompt": prompt, "cwd": self.home.project}
        body.update(fields)
        r = self.client.post("/v1/conversations", body)
        self.assertEqual(r.status, status, r)
        doc = r.json()
        return doc["conversation"]["id"], doc["run"]


class Web(BrowserCase):
    home_name = "web"

    # --- the tests -----------------------------------------------------

    def test_1_sign_in_from_the_fragment(self):
        self.sign_in()
        self.assertNotIn("token", self.d.current_url, "the token left the address bar")
        self.assertEqual(self.d.execute_script("return sessionStorage.getItem('baton.token')"),
                         self.serve.token)
        cookie = self.d.get_cookie("baton_token")
        self.assertIsNotNone(cookie, "POST /v1/login set no cookie")
        self.assertEqual(cookie["value"], self.serve.token)
        self.assertTrue(cookie["httpOnly"])
        self.assertEqual(cookie.get("sameSite"), "Strict")
        self.assertNotIn("baton_token", self.d.execute_script("return document.cookie"))
        self.until(lambda: self.el("conn-text").text == "live", "the streams to connect")
        # a reload without the fragment signs in from sessionStorage
        self.d.get(self.base + "/")
        self.until(lambda: self.shown("app"), "the app after a reload")
        self.shot("desktop-empty")

    def test_2_login_form(self):
        self.sign_in()  # then forget it: no token in the tab, no cookie
        self.d.execute_script("sessionStorage.clear()")
        self.d.delete_all_cookies()
        self.d.get(self.base + "/")
        self.until(lambda: self.shown("login"), "the login form")
        self.assertIn("$BATON_HOME/serve.token", self.el("login").text)
        self.assertFalse(self.shown("app"))
        self.shot("desktop-login")
        self.el("login-token").send_keys("f" * 64, Keys.ENTER)
        self.until(lambda: self.shown("login-error"), "the wrong token's error")
        self.assertIn("did not accept", self.el("login-error").text)
        # the whole address pasted works as well as the token
        self.el("login-token").send_keys(self.serve.url, Keys.ENTER)
        self.until(lambda: self.shown("app"), "the app after signing in")
        self.assertIsNotNone(self.d.get_cookie("baton_token"))

    def test_3_new_conversation_streams_then_renders(self):
        self.sign_in()
        self.home.gate.hold()
        self.el("new-btn").click()
        self.until(lambda: self.q("#new-coder option"), "the coders")
        coders = {o.get_attribute("value"): o for o in self.q("#new-coder option")}
        self.assertTrue(coders["codex"].is_enabled())
        self.assertEqual(self.el("new-coder").get_attribute("value"), "codex")
        for c in servetest.OTHER_CODERS:
            self.assertFalse(coders[c].is_enabled(), c)
            self.assertIn("not installed", coders[c].text)
        cwd = self.el("new-cwd")
        cwd.clear()
        cwd.send_keys(self.home.project)
        prompt = self.el("new-prompt")
        prompt.send_keys(MARKUP)
        prompt.send_keys(Keys.SHIFT, Keys.ENTER)  # a new line, not a send
        prompt.send_keys("second line")
        self.assertIn("#new", self.d.current_url)
        prompt.send_keys(Keys.ENTER)
        self.until(lambda: "#c=" in self.d.current_url, "the new conversation")
        conv = self.d.current_url.split("#c=")[1]
        # held: the answer so far, as plain text, while it works
        self.until(lambda: self.q(".msg.assistant.streaming .body.plain")[0].text == HELD_ANSWER,
                   "the streamed text")
        self.assertTrue(self.shown("working"))
        self.assertTrue(self.shown("cancel-btn"))
        self.assertEqual(self.el("send-btn").text, "Queue")
        self.assertEqual(self.read(lambda: self.q(".msg.user .body")[0].text),
                         f"{MARKUP}\nsecond line")
        self.assert_markup_is_text()
        self.shot("desktop-streaming")
        self.home.gate.release()
        self.until(lambda: self.answers() == [ANSWER], "the rendered answer")
        self.until(lambda: not self.shown("working"), "the turn to end")
        self.assertEqual(self.q(".msg.assistant.streaming"), [])
        self.assertFalse(self.shown("cancel-btn"))
        self.assertEqual(self.el("send-btn").text, "Send")
        self.until(lambda: self.st_of(conv) == "completed", "the list to say completed")
        def title_and_meters():
            (item,) = [li for li in self.q(".conv-item") if li.get_attribute("data-id") == conv]
            return (item.find_element(By.CSS_SELECTOR, ".title").text,
                    len(item.find_elements(By.CSS_SELECTOR, "meter")))
        self.assertEqual(self.read(title_and_meters), (MARKUP, 1))
        self.assertIn("of 258.4k", self.el("conv-context-text").text)
        self.assert_markup_is_text()
        self.assertEqual([(m["role"], m["text"]) for m in self.home.show(conv)["messages"]],
                         [("user", f"{MARKUP}\nsecond line"), ("assistant", ANSWER)])
        self.shot("desktop-conversation")

    def test_4_queue_take_back_then_send(self):
        self.sign_in()
        self.home.gate.hold()
        conv, run = self.create("queue test")
        self.held(conv, run["id"] if isinstance(run, dict) else run)
        self.open_conv(conv)
        box = self.el("prompt")
        box.send_keys("taken back <b>x</b>", Keys.ENTER)
        self.until(lambda: self.shown("queue") and self.q("#queue li"), "the queued message")
        (text,) = self.read(lambda: [li.text for li in self.q("#queue li")])
        self.assertIn("taken back <b>x</b>", text)
        self.assertIn("queued #", text)
        self.assertEqual(box.get_attribute("value"), "")
        self.shot("desktop-queued")
        self.read(lambda: self.q("#queue li button")[0].click())
        self.until(lambda: not self.shown("queue"), "the queue to empty")
        self.assertEqual(box.get_attribute("value"), "taken back <b>x</b>")
        self.assertEqual(self.detail_raw(conv)["queued"], [])
        box.clear()
        box.send_keys("sent after", Keys.ENTER)
        self.until(lambda: self.q("#queue li"), "the second queued message")
        self.home.gate.release()
        self.until(lambda: self.answers() == [ANSWER, ANSWER], "both answers")
        self.until(lambda: not self.shown("queue"), "the queue to empty")
        self.assertEqual(self.read(lambda: [e.text for e in self.q(".msg.user .body")]),
                         ["queue test", "sent after"])
        self.assert_markup_is_text()

    def test_5_cancel_then_retry(self):
        self.sign_in()
        self.home.gate.hold()
        conv, run = self.create("cancel me")
        self.held(conv, run["id"] if isinstance(run, dict) else run)
        self.open_conv(conv)
        self.until(lambda: self.shown("cancel-btn"), "the cancel button")
        self.assertFalse(self.shown("retry-btn"))
        self.el("cancel-btn").click()
        self.until(lambda: self.shown("retry-btn"), "the retry button")
        self.assertEqual(self.el("turn-state").text, "last turn cancelled")
        self.assertFalse(self.shown("working"))
        self.shot("desktop-cancelled")
        self.home.gate.release()
        self.el("retry-btn").click()
        self.until(lambda: self.answers()[-1:] == [ANSWER], "the retried answer")
        self.until(lambda: not self.shown("retry-btn") and not self.shown("working"),
                   "the retry to end")
        runs = self.detail_raw(conv)["runs"]
        self.assertEqual([r["state"] for r in runs], ["cancelled", "completed"])

    def test_6_handoff_forced_send_and_delete(self):
        self.sign_in()
        conv, _ = self.create("hand me off")
        self.idle_raw(conv)
        self.open_conv(conv)
        self.until(lambda: self.answers() == [ANSWER], "the answer")
        self.el("handoff-btn").click()
        self.until(lambda: self.shown("handoff-box"), "the handoff box")
        cmd = self.el("handoff-cmd").text
        self.assertIn(NATIVE_ID, cmd)
        printed = self.home.baton("handoff", "--print", conv).stdout.decode().strip()
        self.assertEqual(cmd, printed)
        self.el("handoff-copy").click()
        self.until(lambda: self.el("handoff-copy").text == "Copied", "the copy")
        self.assertEqual(self.d.execute_async_script(
            "navigator.clipboard.readText().then(arguments[0], () => arguments[0](null))"),
            printed)
        self.shot("desktop-handoff")
        # in a tmux session: that one marks it handed off
        self.el("handoff-tmux").click()
        self.until(lambda: self.el("handoff-cmd").text.startswith("tmux attach -t "),
                   "the tmux command")
        session = self.el("handoff-cmd").text.split("tmux attach -t ")[1]
        self.assertTrue(session.startswith("baton-"), session)
        self.assertIn(session, self.el("handoff-note").text)
        has = subprocess.run(["tmux", "has-session", "-t", f"={session}"], env=self.home.env,
                             capture_output=True)
        self.assertEqual(has.returncode, 0, has.stderr)
        self.until(lambda: "handed off" in self.el("conv-meta").text, "the handed-off status")
        self.until(lambda: self.st_of(conv) == "transferred", "the list's handed-off mark")
        # sending to a handed-off conversation asks first, then forces it
        self.el("prompt").send_keys("take it back", Keys.ENTER)
        a = self.alert()
        self.assertIn("handed off", a.text)
        a.accept()
        self.until(lambda: self.answers() == [ANSWER, ANSWER], "the forced turn's answer")
        self.until(lambda: not self.shown("working"), "the forced turn to end")
        self.el("delete-btn").click()
        a = self.alert()
        self.assertIn("hand me off", a.text)
        a.accept()
        self.until(lambda: "#c=" not in self.d.current_url, "the list after delete")
        self.until(lambda: conv not in [li.get_attribute("data-id")
                                        for li in self.q(".conv-item")], "it to leave the list")
        self.assertNotIn(conv, [c["id"] for c in self.home.ls()])

    def test_7_reconnects_after_a_restart(self):
        self.sign_in()
        conv, _ = self.create("across a restart")
        self.idle_raw(conv)
        self.open_conv(conv)
        self.until(lambda: self.el("conn-text").text == "live", "the streams")
        port = self.serve.port
        self.serve.stop()
        self.until(lambda: self.el("conn-text").text in ("reconnecting", "offline"),
                   "the page to notice")
        self.shot("desktop-reconnecting")
        cls = type(self)
        cls.serve = self.home.serve("--listen", f"127.0.0.1:{port}")
        cls.client = cls.serve.client()
        self.until(lambda: self.el("conn-text").text == "live", "the page to reconnect", timeout=30)
        # a turn sent elsewhere shows up, streamed through the new server
        self.home.baton("send", conv, "from the cli")
        self.until(lambda: [e.text for e in self.q(".msg.user .body")][-1:] == ["from the cli"],
                   "the CLI's prompt")
        self.until(lambda: self.answers() == [ANSWER, ANSWER], "the CLI's turn's answer")

    def test_9_subagent_work_apart(self):
        """A codex turn whose sub-agent thread ran on the same connection
        (the stream of corpus case codex-subagent-02, sent by the CLI):
        the answer is the parent's final answer only; the sub-agent and
        what it did are activity lines (the agent, then its work marked
        with an arrow), its words never in the answer."""
        case = servetest.TOP / "tests/corpus/cases/codex-subagent-02-child-ends-first.case"
        replay = os.path.join(self.home.dir, "subagent.jsonl")
        with open(replay, "w", encoding="utf-8") as f:
            f.write(case.read_text(encoding="utf-8").split("--- stdout\n", 1)[1])
        saved = dict(self.home.env)
        self.home.env["FAKE_CODER_REPLAY"] = replay
        self.home.env.pop("FAKE_CODER_PAUSE_AFTER", None)
        try:
            out = self.home.baton("run", "--json", "Count the files with a helper").stdout
        finally:
            self.home.env.clear()
            self.home.env.update(saved)
        conv = json.loads(out.decode().splitlines()[0])["conversation"]
        self.sign_in()
        self.open_conv(conv)
        self.until(lambda: self.answers() == ["There are two files."], "the parent's answer")
        def lines():
            return [(t.find_element(By.CSS_SELECTOR, ".kind").text,
                     t.find_element(By.CSS_SELECTOR, ".what").text) for t in self.q(".tool")]
        want = [("tool", "spawnAgent"), ("agent", "Counter"), ("\u21b3 said", "CHILD WORDS"),
                ("\u21b3 $", "/bin/bash -lc ls")]
        self.until(lambda: all(w in self.read(lines) for w in want), "the sub-agent's lines")
        self.assertNotIn("CHILD WORDS", " ".join(self.answers()))
        self.shot("desktop-subagent")

    def test_8_phone_width(self):
        conv, _ = self.create("on a phone")
        self.idle_raw(conv)
        d = browser(375, 812, phone=True)
        try:
            self.sign_in(d)
            self.until(lambda: self.q(".conv-item", d), "the list", d)
            self.assertTrue(self.shown("list-pane", d))
            self.assertFalse(self.shown("main-pane", d))
            self.assertLessEqual(d.execute_script("return document.documentElement.scrollWidth"),
                                 375, "wider than the phone")
            self.shot("phone-list", d)
            item = [li for li in self.q(".conv-item", d) if li.get_attribute("data-id") == conv]
            item[0].click()
            self.until(lambda: self.shown("conv-view", d) and self.q(".msg.assistant .md", d),
                       "the transcript", d)
            self.assertFalse(self.shown("list-pane", d))
            back = [b for b in self.q("#conv-view .back", d)][0]
            self.assertTrue(back.is_displayed())
            self.assertLessEqual(d.execute_script("return document.documentElement.scrollWidth"),
                                 375, "wider than the phone")
            self.shot("phone-conversation", d)
            back.click()
            self.until(lambda: self.shown("list-pane", d) and not self.shown("main-pane", d),
                       "the list again", d)
            self.assert_console_clean(d)
        finally:
            d.quit()

    def test_9_question_shown_not_asked(self):
        """A question claude asked (AskUserQuestion: no item id) under
        --approval auto is one row of its run, `question`, not answered;
        opened, its header, text, options and that nobody could answer it
        during the turn."""
        script = os.path.join(self.home.dir, "claude-asks")
        text = servetest.TOP / "fixtures/claude/2.1.332/text.jsonl"
        ask = ('{"type":"control_request","request_id":"ask-1","request":{"subtype":'
               '"can_use_tool","tool_name":"AskUserQuestion","input":{"questions":[{'
               '"question":"Which database?","header":"DB","options":[{"label":"SQLite",'
               '"description":"one file"},{"label":"Postgres","description":"a server"}],'
               '"multiSelect":false}]},"tool_use_id":"toolu_ask"}}')
        with open(script, "w") as f:
            f.write("#!/bin/sh\n"
                    '[ "$1" = --version ] && { echo "2.1.332 (Claude Code)"; exit 0; }\n'
                    f"read -r prompt; head -1 '{text}'\n"
                    f"echo '{ask}'\n"
                    f"read -r answer; tail -1 '{text}'\ncat >/dev/null\n")
        os.chmod(script, 0o755)
        saved = dict(self.home.env)
        self.home.env["BATON_CLAUDE_BIN"] = script
        try:
            out = self.home.baton("run", "-c", "claude", "--json", "--approval", "auto",
                                  "Ask me").stdout.decode()
        finally:
            self.home.env.clear()
            self.home.env.update(saved)
        conv = json.loads(out.splitlines()[0])["conversation"]
        self.sign_in()
        self.open_conv(conv)
        rows = lambda: self.q(".tool[data-kind='approval']")
        self.until(lambda: len(rows()) == 1 and rows()[0].get_attribute("data-status") == "declined",
                   "the question's row")
        self.assertEqual(self.read(lambda: [e.text for e in rows()[0].find_elements(
            By.CSS_SELECTOR, "summary > span")]), ["question", "Which database?", "not answered"])
        rows()[0].find_element(By.CSS_SELECTOR, "summary").click()
        self.until(lambda: rows()[0].find_element(By.CSS_SELECTOR, "pre.out").text,
                   "the question's text")
        self.assertEqual(self.read(lambda: rows()[0].find_element(By.CSS_SELECTOR, "pre.out").text),
                         "DB: Which database? [SQLite (one file) / Postgres (a server)]\n"
                         "not answered: nobody could answer during the turn; answer it with "
                         "your next message")
        self.shot("desktop-question")

    def test_9_new_without_snapshots(self):
        # the new form's "snapshots" unchecked is "snapshot": false, for the
        # first turn and the page's later messages: no changes recorded, no
        # store made; the form remembers the setting
        repo = os.path.join(self.home.dir, "webgit")
        subprocess.run(["git", "init", "-q", repo], check=True)
        self.sign_in()
        self.el("new-btn").click()
        self.until(lambda: self.q("#new-coder option"), "the coders")
        self.assertTrue(self.el("new-snapshot").is_selected())  # the default
        cwd = self.el("new-cwd")
        cwd.clear()
        cwd.send_keys(repo)
        self.el("new-snapshot").click()
        self.el("new-prompt").send_keys("no snapshots", Keys.ENTER)
        self.until(lambda: "#c=" in self.d.current_url, "the new conversation")
        conv = self.d.current_url.split("#c=")[1]
        self.until(lambda: self.st_of(conv) == "completed", "the first turn")
        self.el("prompt").send_keys("and again", Keys.ENTER)
        self.until(lambda: len(self.idle_raw(conv)["runs"]) == 2, "the second turn")
        p = self.home.baton("diff", conv, check=False)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.home.home, "snapshots")))
        self.d.execute_script("location.hash = '#new'")
        self.until(lambda: self.shown("new-view"), "the form")
        self.assertFalse(self.el("new-snapshot").is_selected())  # remembered
        self.assert_console_clean(self.d)



class WebSteer(BrowserCase):
    """Steer from the page: while a turn runs the composer offers Steer
    beside Queue; Steer puts the message into the running turn (the fake
    coder replays a recorded codex steer: the turn ends only after it went
    in), shown in that turn as the person's words, and the turn's answer is
    the steer's. No turn running: only Send."""

    home_name = "web-steer"
    home_env = {"FAKE_CODER_REPLAY": str(servetest.TOP / "fixtures/codex/0.171.0/steer.jsonl")}

    def test_steer_from_the_page(self):
        self.sign_in()
        conv, run = self.create("first [[slow:25]]")
        self.open_conv(conv)
        self.until(lambda: self.shown("steer-btn"), "the Steer button while the turn runs")
        self.assertEqual(self.el("send-btn").text, "Queue")
        self.el("prompt").send_keys("steer-words-banana <b>x</b>")
        self.shot("desktop-steer")
        self.el("steer-btn").click()
        self.until(lambda: self.answers()[-1:] == ["Hello! You said: steer-words-banana"],
                   "the steer's answer")
        rows = self.read(lambda: [e.text for e in self.q(".tool summary")])
        self.assertTrue(any("steered" in r and "steer-words-banana <b>x</b>" in r for r in rows),
                        rows)
        self.shot("desktop-steered")
        self.until(lambda: not self.shown("steer-btn"), "no Steer once the turn ended")
        self.assertEqual(self.el("send-btn").text, "Send")
        self.assertEqual(self.el("prompt").get_attribute("value"), "")
        self.assertEqual(self.detail_raw(conv)["queued"], [])
        self.assert_markup_is_text()


class WebLeave(BrowserCase):
    """A conversation's stream schedules a new read of it (120 ms after
    turn.completed); the person leaves for the New form before it runs:
    the form stays, and nothing says the conversation is gone (the read
    ran with no conversation open, got 404 and went back to the list).
    The page's 120 ms timers are held and run by the test, after the
    move, so the order does not depend on the machine's speed."""

    home_name = "web-leave"

    def test_new_before_a_scheduled_read(self):
        self.sign_in()
        conv, _ = self.create("leave me")
        self.idle_raw(conv)
        self.open_conv(conv)
        self.d.execute_script("""
            window.__held = [];
            const set = window.setTimeout;
            window.setTimeout = (fn, ms, ...a) => {
              if (ms === 120) { window.__held.push(fn); return 0; }
              return set(fn, ms, ...a);
            };""")
        self.el("prompt").send_keys("and again", Keys.ENTER)
        self.until(lambda: self.d.execute_script("return window.__held.length") > 0 and
                   len(self.idle_raw(conv)["runs"]) == 2, "a read scheduled by the stream")
        self.d.execute_script("location.hash = '#new'")
        self.until(lambda: self.shown("new-view"), "the form")
        self.d.execute_script("for (const f of window.__held.splice(0)) f();")
        self.d.execute_script("return new Promise((r) => requestAnimationFrame(() => r()))")
        self.assertTrue(self.shown("new-view"), "the form went away")
        self.assertNotIn("gone", self.el("empty-view").text)
        self.assertIn("#new", self.d.current_url)
        self.assert_console_clean(self.d)


class WebTurns(BrowserCase):
    """A serve with --max-turns 1: a turn beyond it shows as waiting (the
    list's dot, the working line), then runs once the first ends."""

    home_name = "web-turns"
    serve_args = ("--max-turns", "1")

    def test_waiting_turn(self):
        self.sign_in()
        self.home.gate.hold()
        conv1, run1 = self.create("the first turn")
        self.held(conv1, run1)
        conv2, _ = self.create("the turn that waits")
        self.until(lambda: self.st_of(conv2) == "waiting", "the waiting dot in the list")
        self.assertEqual(self.st_of(conv1), "running")
        self.open_conv(conv2)
        self.until(lambda: self.shown("working") and
                   self.el("working-text").text.startswith("waiting for a turn slot"),
                   "the waiting line")
        self.assertTrue(self.shown("cancel-btn"))
        self.shot("desktop-waiting")
        self.home.gate.release()
        self.until(lambda: self.answers()[-1:] == [ANSWER], "the answer once it ran")
        self.until(lambda: self.st_of(conv2) == "completed", "the completed dot")


if __name__ == "__main__":
    servetest.main()
