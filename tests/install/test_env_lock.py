"""The fix lock lives with the environment (issue 30.3): two fixes of one environment exclude each other whatever
their cache directories (with and without sudo, another XDG_CACHE_HOME); where the environment cannot hold the
lock, a system-wide one keyed by its resolved prefix does, and where neither can be had the fix is refused."""

from __future__ import annotations

import pytest

from envdoctor.install import state
from envdoctor.install.installer import open_state
from envdoctor.install.state import EnvBusy, EnvLock, EnvStateError, prefix_lock_paths


@pytest.fixture
def shared(tmp_path, monkeypatch):
    monkeypatch.setattr(state, "SHARED_LOCKS", tmp_path / "shared-locks")
    return tmp_path / "shared-locks"


def test_two_fixes_with_different_caches_do_not_both_run(tmp_path, shared):
    prefix = tmp_path / "venv"
    prefix.mkdir()
    desc = {"prefix": str(prefix)}
    _sdir, first, _journal = open_state(desc, "/venv/bin/python", tmp_path / "cache-of-root")
    try:
        with pytest.raises(EnvBusy, match="another envdoctor fix is running"):
            open_state(desc, "/venv/bin/python", tmp_path / "cache-of-the-user")
        with pytest.raises(EnvBusy):  # the same environment by another path: the resolved prefix is locked
            (tmp_path / "alias").symlink_to(prefix)
            open_state({"prefix": str(tmp_path / "alias")}, "/alias/bin/python", tmp_path / "third-cache")
    finally:
        first.release()
    assert (prefix / state.PREFIX_LOCK).is_file()
    _sdir, again, _journal = open_state(desc, "/venv/bin/python", tmp_path / "cache-of-the-user")
    again.release()


def test_a_prefix_that_cannot_hold_the_lock_is_locked_in_the_shared_place(tmp_path, shared):
    prefix = tmp_path / "not-a-directory"
    prefix.write_text("")  # no lock file can be made under it
    first = EnvLock(tmp_path / "a", "py", prefix=str(prefix))
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first.acquire()
    try:
        assert prefix_lock_paths(str(prefix))[1].is_file()
        with pytest.raises(EnvBusy):
            EnvLock(tmp_path / "b", "py", prefix=str(prefix)).acquire()
    finally:
        first.release()


def test_no_lock_to_be_had_refuses_rather_than_races(tmp_path, monkeypatch):
    prefix = tmp_path / "not-a-directory"
    prefix.write_text("")
    monkeypatch.setattr(state, "SHARED_LOCKS", prefix / "locks")  # cannot be made either
    (tmp_path / "a").mkdir()
    with pytest.raises(EnvStateError, match="refusing rather than racing"):
        EnvLock(tmp_path / "a", "py", prefix=str(prefix)).acquire()
