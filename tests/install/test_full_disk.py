"""A full disk under envdoctor's state directory during `fix --yes`: a clean exit, the environment unchanged.

The state directory (XDG_CACHE_HOME) is a small tmpfs of its own, so the disk is really full at the write
boundary: while pip downloads, while the replaced files are kept, and after the install when the fix is
recorded. Mounting needs root (or a user namespace); elsewhere these tests are skipped."""

from __future__ import annotations

import errno
import os
import subprocess

import pytest

from tests.install.test_unlucky import _state_dir, _wait_for
from tests.test_install import _pip_install_pid, assert_rolled_back, build_wheel, fake_torch, fix, freeze

pytestmark = pytest.mark.slow  # each test builds a real venv and runs pip (tens of seconds)


@pytest.fixture
def small_disk(site):
    cache = site.tmp / "cache"
    cache.mkdir(exist_ok=True)
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m,mode=0700", "envdoctor-test",
                                            str(cache)], capture_output=True).returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    try:
        yield cache
    finally:
        subprocess.run(["umount", "-l", str(cache)], check=False)


def fill(disk, leave: int = 0) -> None:
    """Write a file on `disk` until at most `leave` bytes are free."""
    st = os.statvfs(disk)
    want = max(0, st.f_bavail * st.f_frsize - leave)
    block = b"\0" * (1 << 16)
    with open(disk / "filler", "ab") as fh:
        try:
            while want > 0:
                want -= fh.write(block[: min(len(block), want)])
                fh.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC


def _envdoctor_traceback(stderr: str) -> bool:
    """envdoctor's own traceback; pip's, which it prints on ENOSPC, reaches stderr as indented progress lines."""
    return any(line.startswith("Traceback") for line in stderr.splitlines())


def _journal_and_backups(site) -> list:
    sdir = _state_dir(site)
    return [p.name for p in sdir.iterdir() if p.name == "journal.json" or p.name.startswith("backup")]


@pytest.mark.hostile("exit 2", "rolled back")
def test_a_full_disk_before_and_while_downloading_changes_nothing(site, small_disk):
    # Half a MiB that does not compress: more than the room left for the download.
    site.index.add_torch(build_wheel(site.tmp, "torch", "2.14.1+cpu", {"torch/__init__.py": "__version__ = '2.14.1+cpu'\n",
                                                                       "torch/blob.txt": os.urandom(1 << 18).hex()},
                                     requires=["fakedep>=2"]))
    before = freeze(site)
    fill(small_disk)
    res = fix(site, "--yes")
    assert res.returncode == 2 and "No space left on device" in res.stderr and "Nothing was changed" in res.stderr
    assert not _envdoctor_traceback(res.stderr)
    assert freeze(site) == before
    (small_disk / "filler").unlink()
    fill(small_disk, leave=64 << 10)
    res = fix(site, "--yes")
    assert not _envdoctor_traceback(res.stderr)
    assert_rolled_back(site, res, before)
    assert "download failed" in res.stdout and "nothing was changed" in res.stdout
    assert _journal_and_backups(site) == []


@pytest.mark.hostile("rolled back")
def test_a_full_disk_while_keeping_the_replaced_files_changes_nothing(site, small_disk):
    # The installed torch holds a file bigger than the disk has room for (listed in its RECORD, so it is kept).
    [dist] = list(site.venv.glob("lib/python3.*/site-packages/torch-2.13.0+cpu.dist-info"))
    big = dist.parent / "torch" / "big.bin"
    big.write_bytes(os.urandom(6 << 20))
    with open(dist / "RECORD", "a") as fh:
        fh.write("torch/big.bin,,\n")
    site.index.add_torch(fake_torch(site.tmp, "2.14.1+cpu", requires=["fakedep>=2"]))
    before = freeze(site)
    res = fix(site, "--yes")
    assert not _envdoctor_traceback(res.stderr)
    assert_rolled_back(site, res, before)
    assert "cannot keep a backup and a journal" in res.stdout and "No space left on device" in res.stdout
    assert big.stat().st_size == 6 << 20
    assert _journal_and_backups(site) == []


@pytest.mark.hostile("rolled back")
def test_a_disk_that_fills_during_the_install_rolls_the_fix_back(site, small_disk):
    """The fix cannot be recorded (so it could not be undone): it is rolled back, not left unrecorded."""
    site.index.add_torch(fake_torch(site.tmp, "2.14.1+cpu", requires=["fakedep>=2"], pad_files=2000))
    before = freeze(site)
    proc = fix(site, "--yes", popen=True)
    _wait_for(lambda: _pip_install_pid(site.python), "pip install start", proc)
    fill(small_disk)
    out, err = proc.communicate(timeout=300)
    assert not _envdoctor_traceback(err)
    res = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    assert_rolled_back(site, res, before)
    assert "cannot record the fix" in out and "No space left on device" in out
    assert _journal_and_backups(site) == []
