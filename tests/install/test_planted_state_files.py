"""The files `fix` and `undo` keep (the journal, last_fix.json, the lock files, the backup's manifest and kept
copies) and the ones they read from the environment (conda's record, constraints files, a file:// index) are read
through envdoctor.bounded_read (issue 30): a FIFO, /dev/zero or a huge file planted there is a clear error, never a
hang; a path holding NUL in a manifest or in last_fix.json is a damaged backup (exit 3) or bad state (exit 2),
never an internal error."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from envdoctor.errors import InputError
from envdoctor.fix_journal import JOURNAL, LAST_FIX, LOCK, finished, is_locked, load_journal
from envdoctor.install import installer
from envdoctor.install.backup import check_backup
from envdoctor.install.conda_env import conda_torch
from envdoctor.install.constraints import read_constraints
from envdoctor.install.state import BackupDamaged, EnvLock, _open_lock, lock_holder
from envdoctor.wheels.remote import BoundedFetch

HUGE = 1 << 40  # sparse: nothing is written


def _finishes(call):
    """What `call()` returns or raises, run in a thread; a call that waits on a FIFO's writer fails the test (the
    FIFOs are opened for writing afterwards, so a waiting reader is let go)."""
    box = {}

    def run():
        try:
            box["value"] = call()
        except BaseException as exc:  # handed back to the test
            box["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(10)
    stuck = t.is_alive()
    if stuck:
        for fifo in _FIFOS:
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
        t.join(5)
    assert not stuck, "it waited on a FIFO"
    return box


_FIFOS: list = []


def _plant(path: Path, kind: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
        _FIFOS.append(str(path))
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    else:
        with open(path, "wb") as fh:
            fh.truncate(HUGE)


KINDS = ["fifo", "dev-zero", "huge"]


def _desc(prefix: Path) -> dict:
    return {"prefix": str(prefix), "paths": {}, "dists": []}


@pytest.mark.parametrize("kind", KINDS)
def test_a_planted_journal_is_unreadable_not_a_hang(tmp_path, kind):
    _plant(tmp_path / JOURNAL, kind)
    box = _finishes(lambda: load_journal(tmp_path))
    assert isinstance(box.get("error"), OSError), box


@pytest.mark.parametrize("kind", KINDS)
def test_a_planted_last_fix_is_no_fix_to_undo_or_unreadable(tmp_path, kind):
    _plant(tmp_path / LAST_FIX, kind)
    box = _finishes(lambda: installer._undo_last(tmp_path, _desc(tmp_path), "/py", print))
    err = box.get("error")
    assert isinstance(err, InputError), box
    assert "no fix to undo" in str(err) if kind != "huge" else "unreadable fix state" in str(err) and "MiB" in str(err)
    assert _finishes(lambda: installer._read_last_fix(tmp_path)) == {"value": None}


@pytest.mark.parametrize("kind", KINDS)
def test_a_planted_last_fix_does_not_mark_a_journal_finished(tmp_path, kind):
    _plant(tmp_path / LAST_FIX, kind)
    journal = installer.Journal(op="fix", id="x", before={})
    assert _finishes(lambda: finished(tmp_path, journal)) == {"value": False}


@pytest.mark.parametrize("kind", KINDS)
def test_a_planted_lock_is_refused_or_unknown(tmp_path, kind):
    _plant(tmp_path / LOCK, kind)
    locked = _finishes(lambda: is_locked(tmp_path))
    assert locked == {"value": None if kind != "huge" else False}, locked
    assert _finishes(lambda: lock_holder(tmp_path / LOCK)) == {"value": None}
    if kind != "huge":  # a huge regular file is a lock like any other
        box = _finishes(lambda: EnvLock(tmp_path, "/py").acquire())
        assert isinstance(box.get("error"), InputError) and "not a regular file" in str(box["error"]), box


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_planted_prefix_lock_is_refused(tmp_path, kind):
    _plant(tmp_path / "lockfile", kind)
    for create in (True, False):
        box = _finishes(lambda create=create: _open_lock(tmp_path / "lockfile", create))
        err = box.get("error")
        if kind == "dev-zero":  # O_NOFOLLOW: a link is not opened at all
            assert box == {"value": None} or isinstance(err, InputError), box
        else:
            assert isinstance(err, InputError) and "a FIFO" in str(err), box


@pytest.mark.parametrize("kind", KINDS)
def test_a_planted_manifest_is_a_damaged_backup(tmp_path, kind):
    _plant(tmp_path / "manifest.json", kind)
    box = _finishes(lambda: check_backup(tmp_path))
    manifest, problems = box["value"]
    assert manifest is None and "no readable manifest" in problems[0], problems


def test_a_kept_copy_that_is_a_fifo_is_a_damaged_backup(tmp_path):
    entry = {"path": "/env/lib/x.py", "link": None, "sha256": "0" * 64}
    (tmp_path / "manifest.json").write_text(json.dumps({"dists": {}, "files": [entry]}))
    _plant(tmp_path / "files" / "env" / "lib" / "x.py", "fifo")
    box = _finishes(lambda: check_backup(tmp_path))
    _manifest, problems = box["value"]
    assert problems and "not a regular file" in problems[0], problems


@pytest.mark.parametrize("where", ["manifest", "last_fix"])
def test_a_path_with_nul_under_undo_is_damaged_state_not_an_internal_error(tmp_path, where):
    bdir = tmp_path / "backup"
    (bdir / "files").mkdir(parents=True)
    entry = {"path": f"{tmp_path}/x\0y", "link": None, "sha256": "0"}
    (bdir / "manifest.json").write_text(json.dumps({"dists": {}, "files": [entry] if where == "manifest" else []}))
    backup = str(bdir) if where == "manifest" else f"{bdir}\0x"
    (tmp_path / LAST_FIX).write_text(json.dumps({"before": {}, "backup": backup, "id": "x"}))
    with pytest.raises(BackupDamaged if where == "manifest" else InputError) as err:
        installer._undo_last(tmp_path, _desc(tmp_path), "/py", print)
    assert ("names no file" if where == "manifest" else "not the path of a directory") in str(err.value)


@pytest.mark.parametrize("kind", KINDS)
def test_a_planted_conda_record_is_no_answer_not_a_hang(tmp_path, kind):
    _plant(tmp_path / "conda-meta" / "pytorch-2.5.1-py3.12_cuda12.4_0.json", kind)
    box = _finishes(lambda: conda_torch(str(tmp_path)))
    assert box["value"].version is None, box


@pytest.mark.parametrize("kind", KINDS)
def test_a_planted_constraints_file_is_a_problem_not_a_hang(tmp_path, kind):
    _plant(tmp_path / "c.txt", kind)
    box = _finishes(lambda: read_constraints([("PIP_CONSTRAINT", str(tmp_path / "c.txt"))]))
    _found, problems = box["value"]
    assert problems and "pip cannot read" in problems[0], problems


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_file_index_page_that_is_a_fifo_is_unreadable_not_a_hang(tmp_path, kind):
    _plant(tmp_path / "page.html", kind)
    box = _finishes(lambda: BoundedFetch(timeout=5.0)._file((tmp_path / "page.html").as_uri()))
    assert isinstance(box.get("error"), OSError), box
