"""Debian's chromium, driven headless through Playwright (no browser download).

Flags as this machine needs them: no sandbox (root), no GPU, no background networking or
component updates (the network is closed), a fresh profile per session.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.tooling import unavailable

FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


def chromium_path() -> str:
    """The system chromium, or skip (fail in CI)."""
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        unavailable("chromium is not installed (apt-get install chromium)")
    return path


@contextmanager
def browser_context(profile: Path) -> Iterator[Any]:
    """A persistent context on a fresh profile directory (``--user-data-dir``)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("playwright is not installed (pip install playwright)")
    exe = chromium_path()
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(profile), executable_path=exe, args=FLAGS, headless=True,
            viewport={"width": 1280, "height": 900},
        )
        try:
            yield context
        finally:
            context.close()


@contextmanager
def opened(context: Any, path: Path) -> Iterator[tuple[Any, list[str], list[str]]]:
    """Open a local file; collect console errors and any request that leaves the file.

    Yields the page, the console/page errors, and the non-file URLs it tried (all aborted).
    """
    page = context.new_page()
    errors: list[str] = []
    outside: list[str] = []
    page.on("console", lambda m: errors.append(f"console {m.type}: {m.text}")
            if m.type in ("error", "assert") else None)
    page.on("pageerror", lambda e: errors.append(f"page error: {e}"))

    def route(r: Any) -> None:
        if r.request.url.startswith("file://"):
            r.continue_()
        else:
            outside.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    page.goto(path.resolve().as_uri(), wait_until="load")
    try:
        yield page, errors, outside
    finally:
        page.close()
