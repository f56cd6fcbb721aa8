"""The app in a real terminal (tmux): a path typed into the Diagnose box stays there; keys leave it only after Escape;
`envdoctor --snapshot FILE` starts it over that file."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid

import pytest

from tests.conftest import ROOT, fixture_path

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")]

APP = ("import sys, pathlib; from envdoctor.snapshot import load_snapshot; from envdoctor.tui.app import make_app; "
       "app = make_app(load_snapshot(sys.argv[1])); app.run(); "
       "pathlib.Path(sys.argv[2]).write_text(str(app.return_code)); sys.exit(app.return_code)")


def app_env() -> dict:
    """The app's environment in the pane: its size is the pane's (-x, -y), not a COLUMNS or LINES the test run
    inherited, which Textual would take first (a CI runner's COLUMNS=80 wraps the Overview)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TERM": "xterm-256color", "TEXTUAL_ANIMATIONS": "none"}
    for name in ("NO_COLOR", "COLUMNS", "LINES"):
        env.pop(name, None)
    return env


class Tmux:
    def __init__(self, socket: str, status_file) -> None:
        self.socket = socket
        self.status_file = status_file

    def __call__(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=20).stdout

    def screen(self) -> str:
        return self("capture-pane", "-p", "-t", "app")

    def wait_for(self, text: str, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            shown = self.screen()
            if text in shown:
                return shown
            time.sleep(0.2)
        raise AssertionError(f"{text!r} not on the screen:\n{self.screen()}")

    def exit_status(self, timeout: float = 60.0) -> int:
        """The app's return code, which it writes to a file as it ends: neither the pane's screen nor tmux's
        record of a dead pane is reliable about a process that has just exited."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.status_file.exists() and self.status_file.read_text().strip():
                return int(self.status_file.read_text())
            time.sleep(0.2)
        raise AssertionError(f"the app has not ended:\n{self.screen()}\n{self('list-panes', '-a')}")


@pytest.fixture
def tmux(tmp_path):
    t = Tmux(f"envdoctor-test-{uuid.uuid4().hex[:8]}", tmp_path / "return-code")
    env = app_env()
    command = [sys.executable, "-c", APP, str(fixture_path("a100_pcie_8x")), str(t.status_file)]
    subprocess.run(["tmux", "-L", t.socket, "-f", os.devnull, "new-session", "-d", "-s", "app", "-x", "100", "-y", "30",
                    "--", *command],
                   env=env, cwd=tmp_path, check=True, timeout=20)
    t("set-option", "-t", "app", "remain-on-exit", "on")
    yield t
    t("kill-server")


def test_a_typed_path_stays_in_the_diagnose_box(tmux):
    tmux.wait_for("Overview")
    tmux.wait_for("error(s)")  # the diagnosis has painted
    tmux("send-keys", "-t", "app", "d")
    tmux.wait_for("a file's path, or paste any text")
    tmux("send-keys", "-t", "app", "-l", "/tmp/queue/nccl-rerun.log")
    shown = tmux.wait_for("/tmp/queue/nccl-rerun.log")
    assert "type a file's path" in shown  # still the Diagnose tab: no tab switch, no quit, no export dialog
    assert "Export the report" not in shown
    for _ in range(3):  # a loaded machine may read Escape and q as one alt+q; that is the terminal, not the app
        tmux("send-keys", "-t", "app", "Escape")
        time.sleep(0.5)  # Escape's own timeout in the terminal, before the next key
        tmux("send-keys", "-t", "app", "q")
        try:
            status = tmux.exit_status(timeout=10)
            break
        except AssertionError:
            assert "nccl-rerun.logq" not in tmux.screen()  # the q went into the box: that is the app's fault
    else:
        raise AssertionError(f"q did not quit after Escape:\n{tmux.screen()}")
    assert status == 0  # q quits once the focus has left the box (check's exit code: warnings only)


def test_envdoctor_snapshot_file_shows_that_machine_and_quits_with_checks_code(tmp_path):
    """The real command line in a terminal: the app starts over the file (no probing) and names it."""
    snap = fixture_path("rtx5090_old_torch")
    t = Tmux(f"envdoctor-test-{uuid.uuid4().hex[:8]}", tmp_path / "return-code")
    env = app_env()
    script = f'"{sys.executable}" -m envdoctor --snapshot "{snap}"; echo $? > "{t.status_file}"'
    subprocess.run(["tmux", "-L", t.socket, "-f", os.devnull, "new-session", "-d", "-s", "app", "-x", "120", "-y", "30",
                    "--", "sh", "-c", script], env=env, cwd=tmp_path, check=True, timeout=20)
    try:
        shown = t.wait_for("error(s)")
        assert f"Snapshot {snap}" in " ".join(shown.split())  # the Overview names the file
        assert "rtx5090_old_torch.json (snapshot taken" in shown and "probing" not in shown
        t("send-keys", "-t", "app", "q")
        assert t.exit_status() == 1  # `check --snapshot`'s code: the snapshot has errors
    finally:
        t("kill-server")
