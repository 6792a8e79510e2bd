# SPDX-License-Identifier: MIT
"""sse: a Server-Sent Events reader as the WHATWG HTML standard parses a
stream ("Interpreting an event stream"): lines end with CRLF, LF or CR;
a blank line ends a block; `:` starts a comment; `field: value` loses one
space after the colon; a line without a colon is a field with an empty
value. Unlike a browser it keeps every block, comment-only and
retry-only ones too, so a test can check what the server wrote, not only
what EventSource would dispatch.
"""
import re
import time

from httpc import Closed

EOL = re.compile(rb"\r\n|\r|\n")  # a line ends with any of them (the standard)


class Block:
    """The lines between two blank lines: fields [(name, value)] in order
    and the comments' texts (without the colon and one space)."""

    def __init__(self):
        self.fields = []
        self.comments = []

    def values(self, name):
        return [v for k, v in self.fields if k == name]

    def one(self, name):
        """The value of field name, None when absent; AssertionError when
        it appears more than once."""
        v = self.values(name)
        if len(v) > 1:
            raise AssertionError(f"field {name!r} {len(v)} times in one frame: {self}")
        return v[0] if v else None

    @property
    def data(self):
        """The data as EventSource gives it: data lines joined by LF, or
        None without a data field."""
        v = self.values("data")
        return "\n".join(v) if v else None

    @property
    def event(self):
        return self.one("event")

    @property
    def id(self):
        return self.one("id")

    @property
    def retry(self):
        return self.one("retry")

    def is_event(self):
        """A frame EventSource dispatches as a message: data, no event name."""
        return self.data is not None and self.event is None

    def is_ping(self):
        return self.event == "ping"

    def __repr__(self):
        return f"<Block fields={self.fields!r} comments={self.comments!r}>"


class Stream:
    """The event stream of an open response (conn after head())."""

    def __init__(self, conn, response):
        self.conn = conn
        self.response = response
        self.pending = b""  # body bytes not yet split into lines
        self.scanned = 0  # of pending, the bytes that hold no line end
        self.lines = []  # decoded lines not yet parsed
        self.block = Block()  # being read
        self.ended = False  # the body ended
        self.blocks = []  # every block read, in order

    def close(self):
        self.conn.close()

    def _split(self, final):
        """Move whole lines from pending to lines. A CR at the very end may
        be the first half of a CRLF: it waits for the next bytes. The
        search starts where the last one stopped (a 5 MiB event comes in
        80 pieces: scanning it whole each time took 14 s)."""
        p = self.pending
        start = 0
        pos = self.scanned
        while True:
            m = EOL.search(p, pos)
            if not m or (m.group() == b"\r" and m.end() == len(p) and not final):
                break
            self.lines.append(p[start:m.start()].decode("utf-8", errors="replace"))
            start = pos = m.end()
        self.pending = p[start:]
        self.scanned = len(self.pending) - (1 if self.pending.endswith(b"\r") else 0)

    def _parse(self, line):
        """Feed one line; a finished Block when the line is blank."""
        if line == "":
            b = self.block
            self.block = Block()
            if b.fields or b.comments:
                return b
            return None
        if line.startswith(":"):
            text = line[1:]
            self.block.comments.append(text[1:] if text.startswith(" ") else text)
            return None
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        self.block.fields.append((name, value))
        return None

    def next_block(self, timeout=15.0):
        """The next whole block, or None when the stream ended (a block cut
        off by the end is dropped, as the standard says). TimeoutError
        when none came within timeout."""
        deadline = time.monotonic() + timeout
        while True:
            while self.lines:
                b = self._parse(self.lines.pop(0))
                if b is not None:
                    self.blocks.append(b)
                    return b
            if self.ended:
                return None
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no whole frame in time")
            try:
                piece = self.conn.body_some(left)
            except Closed:
                piece = None
            if piece is None:
                self.ended = True
                self._split(final=True)
                continue
            self.pending += piece
            self._split(final=False)

    def next_event(self, timeout=15.0):
        """The next frame that is an event (skipping retry, comment and
        ping blocks, which stay in self.blocks), or None at the end."""
        deadline = time.monotonic() + timeout
        while True:
            b = self.next_block(max(0.001, deadline - time.monotonic()))
            if b is None or b.is_event():
                return b
            if b.data is not None and not b.is_ping():
                raise AssertionError(f"a frame with data that is neither an event nor a "
                                     f"ping: {b}")

    def expect_end(self, timeout=5.0):
        """Assert that the stream ends within timeout with no more events."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                b = self.next_block(max(0.001, deadline - time.monotonic()))
            except TimeoutError:
                raise AssertionError(f"the stream did not end within {timeout} s")
            if b is None:
                return
            if b.is_event():
                raise AssertionError(f"an event after the end was expected: {b}")

    def expect_quiet(self, seconds):
        """Assert that no event comes for seconds and the stream stays open
        (pings and comments may come)."""
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            try:
                b = self.next_block(left)
            except TimeoutError:
                return
            if b is None:
                raise AssertionError("the stream ended; it should have stayed open")
            if b.is_event():
                raise AssertionError(f"no event was expected, got {b}")
