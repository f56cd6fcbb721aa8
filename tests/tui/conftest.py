"""Helpers for driving the app headless: build it on a recorded snapshot, wait for its workers."""

from __future__ import annotations

import asyncio
import functools
import io
import time
from typing import Callable

import pytest
from rich.console import Console

from tests.conftest import ROOT, fixture_path

# The installer tests' PEP 503 index on 127.0.0.1 and throwaway venvs, reused as they are.
from tests.test_install import site, venv_template, wheels  # noqa: F401


@pytest.fixture(autouse=True)
def _steady_terminal(monkeypatch):
    """Snapshots and key presses must not depend on the developer's terminal or colour settings."""
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TEXTUAL_ANIMATIONS", "none")


def recorded_selftests():
    """The self-test results recorded on a CPU machine (`envdoctor selftest all --json`)."""
    import json

    from envdoctor.selftest.result import TestResult

    doc = json.loads((ROOT / "tests" / "fixtures" / "selftest" / "cpu_gloo_all.json").read_text())
    return [TestResult(t["name"], t["status"], t["seconds"], t["metrics"], t["error"], [], t["log"]) for t in doc["tests"]]


async def show_selftests(pilot, app, results) -> None:
    """Hand recorded results to the Self-tests tab as its worker would (messages up)."""
    from envdoctor.selftest.bandwidth import power_of_two_sizes
    from envdoctor.tui import messages as msg

    app.query_one("#selftest-pane").start([r.name for r in results], power_of_two_sizes(1024, 64 << 20))
    for r in results:
        app.post_message(msg.SelftestDone(r))
    app.post_message(msg.SelftestsFinished())
    await settle(pilot, app)


def recorded(name: str):
    from envdoctor.snapshot import load_snapshot

    return load_snapshot(fixture_path(name))


async def settle(pilot, app) -> None:
    """Let every tab's pane be mounted (the first tab's is mounted first, the others after the first frame), and
    messages and workers finish (workers post messages that may start more work)."""
    await until(pilot, lambda: app.panes_mounted)
    for _ in range(3):
        await pilot.pause()
        await app.workers.wait_for_complete()
    await pilot.pause()


async def until(pilot, cond: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await pilot.pause(0.05)
        await asyncio.sleep(0)


def text_of(widget) -> str:
    """What a Static shows (text or a table), as plain text."""
    console = Console(width=200, no_color=True, file=io.StringIO(), markup=False)
    console.print(widget.content)
    return console.file.getvalue()


def screen_lines(app) -> list:
    """The screen as the terminal shows it, one string per row."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), force_terminal=True, color_system=None,
                      record=True, legacy_windows=False, safe_box=False)
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return console.export_text().splitlines()


def aio(fn):
    """Run an async test with asyncio (the project does not depend on an async pytest plugin)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return asyncio.run(fn(*args, **kwargs))

    return wrapper
