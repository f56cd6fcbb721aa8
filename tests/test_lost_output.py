"""A closed output (a pipe whose reader is gone, `| tee` ended by the same Ctrl-C) never hides the exit code and
never stops what envdoctor is doing (issue 30.1)."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from envdoctor import cli
from envdoctor.lost_output import never_raises, write_or_drop
from envdoctor.present.output import emit, emit_json, say

SNAPSHOTS = Path(__file__).parent / "fixtures" / "snapshots"


class GoneReader(io.StringIO):
    """A stream whose reader has gone away: every write and flush raises BrokenPipeError."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")


@pytest.fixture
def gone(monkeypatch):
    """Call it in the test's body (pytest's own capture puts its streams back after the fixtures ran)."""

    def go() -> None:
        monkeypatch.setattr(sys, "stdout", GoneReader())
        monkeypatch.setattr(sys, "stderr", GoneReader())

    return go


def test_printing_to_a_gone_reader_is_dropped_not_raised(gone):
    gone()
    emit("text\n")
    emit_json({"a": 1})
    say("progress")
    assert not isinstance(sys.stdout, GoneReader) and not isinstance(sys.stderr, GoneReader)  # now the null device
    assert write_or_drop(GoneReader(), "x") is False


def test_progress_that_cannot_print_does_not_stop_the_caller(gone):
    gone()
    seen = []

    def progress(line: str) -> None:
        seen.append(line)
        sys.stderr.write(line)

    safe = never_raises(progress)
    safe("rolling back")
    safe("done")
    assert seen == ["rolling back", "done"]


def test_a_real_error_in_progress_is_not_taken_for_a_lost_output():
    def progress(line: str) -> None:
        raise ValueError("a bug in a caller")

    with pytest.raises(ValueError):
        never_raises(progress)("x")


def test_findings_with_a_closed_output_still_exit_1(gone):
    # Before: the BrokenPipeError reached cli.main, which turned it into exit 0 (success, with errors found).
    gone()
    assert cli.main(["check", "--snapshot", str(SNAPSHOTS / "b200_driver_575.json")]) == 1


def test_a_broken_pipe_that_escapes_a_command_is_never_success(monkeypatch):
    def boom(_args):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(cli, "_run", boom)
    monkeypatch.setattr(sys, "stdout", sys.stdout)
    monkeypatch.setattr(sys, "stderr", sys.stderr)
    assert cli.main(["check"]) == 2
