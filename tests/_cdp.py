"""A small Chrome DevTools Protocol client over a pipe, for browser tests that need real time.

``--dump-dom`` with ``--virtual-time-budget`` (``tests/test_book.py``) is enough for a page whose
scripts finish on the main thread; it does not wait for a Web Worker, and it fakes the clock.
The playground encodes in a worker and its targets are about real milliseconds, so its tests
drive Chromium with ``--remote-debugging-pipe``: commands are JSON objects written to the
browser's fd 3, answers and events are read from its fd 4, each message ended by a NUL byte.
No port is opened, and under ``unshare --net`` the page has no network at all.

    with Browser(profile) as browser:
        page = browser.open(url)
        value = page.evaluate("document.title")
        page.console  # every console message, uncaught exception and log entry so far
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.test_book import CHROMIUM


class BrowserError(RuntimeError):
    pass


class Page:
    """One tab, attached with a flat session."""

    def __init__(self, browser: Browser, session: str) -> None:
        self.browser = browser
        self.session = session
        self.console: list[dict[str, Any]] = []

    def send(self, method: str, timeout: float = 120, **params: Any) -> dict[str, Any]:
        return self.browser.send(method, params, session=self.session, timeout=timeout)

    def evaluate(self, expression: str, timeout: float = 120) -> Any:
        """The value of ``expression`` (awaited if it is a promise), as JSON."""
        answer = self.send(
            "Runtime.evaluate",
            timeout=timeout,
            expression=expression,
            awaitPromise=True,
            returnByValue=True,
            timeout_ms=None,
        )
        if "exceptionDetails" in answer:
            details = answer["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            raise BrowserError(f"{expression[:80]!r} threw: {text}")
        return answer["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 60, every: float = 0.05) -> Any:
        """Poll ``expression`` until it is truthy; return its value."""
        end = time.monotonic() + timeout
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > end:
                raise BrowserError(f"timed out waiting for {expression!r}")
            time.sleep(every)

    def errors(self, sources: tuple[str, ...] = ("console", "exception", "log")) -> list[str]:
        """Console errors, uncaught exceptions and error log entries seen so far."""
        return [
            m["text"]
            for m in self.console
            if m["level"] in ("error", "exception", "assert") and m["source"] in sources
        ]


class Browser:
    """Headless Chromium, no network (``unshare --net`` when available), driven over a pipe."""

    def __init__(self, profile: Path, *extra: str, binary: str | None = None) -> None:
        self.profile = profile
        self.extra = extra
        self.binary = binary or CHROMIUM or "chromium"
        self.next_id = 0
        self.buffer = b""
        self.pages: dict[str, Page] = {}

    def __enter__(self) -> Browser:
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()

        def plumbing() -> None:  # in the child: the pipe ends become fds 3 and 4
            # via fresh copies: a pipe end may already be fd 3 or 4 (dup2 onto itself would
            # keep its close-on-exec flag)
            read_end, write_end = os.dup(to_browser_r), os.dup(from_browser_w)
            os.dup2(read_end, 3, inheritable=True)
            os.dup2(write_end, 4, inheritable=True)

        cmd = [
            self.binary,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--no-first-run",
            "--remote-debugging-pipe",
            f"--user-data-dir={self.profile}",
            *self.extra,
            "about:blank",
        ]
        if shutil.which("unshare"):
            cmd = ["unshare", "--net", *cmd]
        self.proc = subprocess.Popen(
            cmd,
            preexec_fn=plumbing,
            close_fds=False,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL if not os.environ.get("TOKCOURSE_CDP_DEBUG") else None,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.send("Browser.close", {}, timeout=10)
        except Exception:  # noqa: BLE001 - closing anyway
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.to_browser)
        os.close(self.from_browser)

    # ------------------------------------------------------------------ the protocol

    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("no answer from the browser in time")
            ready, _, _ = select.select([self.from_browser], [], [], left)
            if not ready:
                continue
            chunk = os.read(self.from_browser, 1 << 20)
            if not chunk:
                raise BrowserError(f"the browser went away (exit {self.proc.poll()})")
            self.buffer += chunk
        message, _, self.buffer = self.buffer.partition(b"\0")
        return json.loads(message)

    def _event(self, message: dict[str, Any]) -> None:
        page = self.pages.get(message.get("sessionId", ""))
        if page is None:
            return
        method, params = message["method"], message.get("params", {})
        if method == "Runtime.consoleAPICalled":
            text = " ".join(
                str(a.get("value", a.get("description", ""))) for a in params.get("args", [])
            )
            page.console.append({"level": params["type"], "text": text, "source": "console"})
        elif method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text", "")
            page.console.append({"level": "exception", "text": text, "source": "exception"})
        elif method == "Log.entryAdded":
            entry = params["entry"]
            page.console.append(
                {"level": entry["level"], "text": entry.get("text", ""), "source": "log"}
            )

    def send(
        self, method: str, params: dict[str, Any], session: str | None = None, timeout: float = 60
    ) -> dict[str, Any]:
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            answer = self._read_message(deadline)
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise BrowserError(f"{method}: {answer['error']}")
                return answer.get("result", {})
            if "method" in answer:
                self._event(answer)

    def open(self, url: str, width: int = 1200, height: int = 900) -> Page:
        """A new tab on ``url``, after its load event, with console capture on."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        page = self.pages[session] = Page(self, session)
        page.send("Runtime.enable")
        page.send("Log.enable")
        page.send("Page.enable")
        page.send(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )
        page.send("Page.navigate", url=url)
        page.wait_for("document.readyState === 'complete'")
        return page


def page_result(url: str, profile: Path, element: str = "result", timeout: float = 600) -> str:
    """The text a test page writes into ``#element`` once its scripts are done (it starts as
    "not run"), waited for in real time."""
    with Browser(profile) as browser:
        page = browser.open(url)
        return page.wait_for(
            f"(() => {{ const t = document.getElementById({json.dumps(element)}).textContent;"
            " return t !== 'not run' && t; })()",
            timeout=timeout,
        )


def as_javascript_holds(text: str) -> str:
    """``text`` as a page holds it once passed through JSON: a high and a low surrogate side by
    side are one character in JavaScript (UTF-16), two lone surrogates in a Python str."""
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def well_formed(text: str) -> str:
    """The same, with every lone surrogate as U+FFFD (what the tiktoken and BERT rows read)."""
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
