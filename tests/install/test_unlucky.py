"""`fix` and `undo` when they are killed, interrupted, raced or given a damaged backup: nothing is lost.

Real processes and signals against the local index of tests/test_install.py; every wait is on a state the
test can see (pip's process, a file pip removed, a line envdoctor printed, a request the index holds)."""

from __future__ import annotations

import json
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from envdoctor.fix_journal import JOURNAL, JOURNAL_SCHEMA
from envdoctor.install.state import write_private
from tests.test_install import ROOT, _pip_install_pid, assert_rolled_back, fake_torch, fix, freeze, undo

pytestmark = pytest.mark.slow  # each test builds a real venv and runs pip (tens of seconds)


def _state_dir(site) -> Path:
    [d] = list((site.tmp / "cache" / "envdoctor" / "state").iterdir())
    return d


def _wait_for(predicate, what: str, proc=None, limit: float = 180.0):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"envdoctor exited before {what}: {proc.communicate()[1][-3000:]}")
        time.sleep(0.01)
    pytest.fail(f"never saw {what}")


def _python_import(site) -> list:
    out = subprocess.run([site.python, "-c", "import torch, fakedep; print(torch.__version__, fakedep.V)"],
                         capture_output=True, text=True, env=site.env)
    return out.stdout.split()


@pytest.mark.hostile("refused", "rolled back")
def test_kill_9_during_pip_install_is_found_and_undone_exactly(site):
    site.index.add_torch(fake_torch(site.tmp, "2.14.1+cpu", requires=["fakedep>=2"], pad_files=4000))
    before = freeze(site)
    proc = fix(site, "--yes", popen=True)
    old_dist = next((site.venv / "lib").glob("python3.*/site-packages/torch-2.13.0+cpu.dist-info"))
    pid = _wait_for(lambda: _pip_install_pid(site.python), "pip install start", proc)
    _wait_for(lambda: not old_dist.exists(), "pip removing the old torch", proc)
    pip = psutil.Process(pid)
    journal = _state_dir(site) / "journal.json"
    assert journal.is_file() and stat.S_IMODE(journal.stat().st_mode) == 0o600
    proc.kill()
    proc.communicate(timeout=60)
    _gone, alive = psutil.wait_procs([pip], timeout=60)
    assert alive == []  # pip died with envdoctor
    half = freeze(site)
    assert half != before

    # The next fix says so and changes nothing.
    res = fix(site, "--yes")
    assert res.returncode == 3, res.stderr
    assert "was interrupted" in res.stderr and f"envdoctor undo --python {site.python}" in res.stderr
    assert "Traceback" not in res.stderr
    assert freeze(site) == half

    # check says so too, as an error.
    res = subprocess.run([sys.executable, "-m", "envdoctor", "check", "--python", site.python, "--json"], cwd=ROOT,
                         env=site.env, capture_output=True, text=True, timeout=300)
    found = [f for f in json.loads(res.stdout)["findings"] if f["category"] == "interrupted_fix"]
    assert [f["severity"] for f in found] == ["error"], res.stdout[-2000:]
    assert found[0]["fix_commands"] == [["envdoctor", "undo", "--python", site.python]]
    assert res.returncode == 1

    res = undo(site)
    assert res.returncode == 0, res.stderr
    assert "rolled back" in res.stdout
    assert freeze(site) == before
    assert _python_import(site) == ["2.13.0+cpu", "1"]
    assert not journal.exists()
    res = undo(site)
    assert res.returncode == 2 and "no fix to undo" in res.stderr


@pytest.mark.hostile("rolled back")
def test_ctrl_c_twice_and_sigterm_do_not_stop_a_rollback(site):
    # Verification fails (the module reports a CUDA build), so envdoctor rolls back 4000 files.
    site.index.add_torch(fake_torch(site.tmp, "2.14.1+cpu", reports="2.14.1+cu130", cuda="13.0", requires=["fakedep>=2"],
                                    pad_files=4000))
    before = freeze(site)
    proc = fix(site, "--yes", popen=True)
    lines: list = []
    rolling = threading.Event()

    def read_stderr():
        for line in proc.stderr:  # until envdoctor exits
            lines.append(line)
            if "rolling back" in line:
                rolling.set()

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    assert rolling.wait(180), "".join(lines)[-3000:]
    for sig in (signal.SIGINT, signal.SIGINT, signal.SIGTERM):
        proc.send_signal(sig)
    out = proc.stdout.read()
    proc.wait(timeout=180)
    reader.join(60)
    res = subprocess.CompletedProcess(proc.args, proc.returncode, out, "".join(lines))
    assert_rolled_back(site, res, before)
    assert "verification failed" in json.loads(out)["message"]


@pytest.mark.parametrize("damage", ["changed", "missing"])
@pytest.mark.hostile("refused")
def test_undo_checks_the_backup_before_touching_anything(site, damage):
    site.index.add_torch(fake_torch(site.tmp, "2.14.1+cpu", requires=["fakedep>=2"]))
    res = fix(site, "--yes")
    assert res.returncode == 0, res.stderr[-3000:]
    after = freeze(site)
    [bdir] = list(_state_dir(site).glob("backup*"))
    [kept] = list(bdir.glob("files/**/torch/__init__.py"))
    if damage == "changed":
        kept.write_text("raise SystemExit('tampered')\n")
    else:
        kept.unlink()
    res = undo(site)
    assert res.returncode == 3, res.stderr
    assert "damaged" in res.stderr and "nothing was changed" in res.stderr and "Traceback" not in res.stderr
    assert freeze(site) == after


@pytest.mark.heavy
@pytest.mark.hostile("refused", "refused")
def test_a_second_fix_on_the_same_environment_refuses_while_the_first_runs(site):
    whl = fake_torch(site.tmp, "2.14.1+cpu", requires=["fakedep>=2"])
    site.index.add_torch(whl)
    site.index.held.add(whl.name)
    site.index.hold.clear()
    before = freeze(site)
    first = fix(site, "--yes", popen=True)
    try:
        assert site.index.requested.wait(180), "the first fix never asked for the wheel"
        second = fix(site, "--yes")
        assert second.returncode == 3, second.stderr
        assert f"another envdoctor fix is running on {site.python} (pid {first.pid})" in second.stderr
        assert "Traceback" not in second.stderr
        res = undo(site)
        assert res.returncode == 3 and f"(pid {first.pid})" in res.stderr
        assert freeze(site) == before
    finally:
        site.index.hold.set()
    out, err = first.communicate(timeout=180)
    assert first.returncode == 0, err[-3000:]
    assert json.loads(out)["status"] == "installed"


@pytest.mark.hostile("handled", "exit 2")
def test_python_with_a_slash_is_a_path_from_the_current_directory(site):
    site.index.add_torch(fake_torch(site.tmp, "2.14.1+cpu", requires=["fakedep>=2"]))
    env = dict(site.env, PYTHONPATH=str(ROOT))
    res = subprocess.run([sys.executable, "-m", "envdoctor", "fix", "--python", "./python", "--torch", "2.14.1",
                          "--index-base", f"{site.url}/whl", "--dry-run", "--json"],
                         cwd=site.venv / "bin", env=env, capture_output=True, text=True, timeout=180)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert [c[0] for c in doc["commands"]] == [str(site.venv / "bin" / "python")] * 2
    res = subprocess.run([sys.executable, "-m", "envdoctor", "check", "--python", "./no-such-python"],
                         cwd=site.venv / "bin", env=env, capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and "no such interpreter" in res.stderr


@pytest.mark.parametrize("where", ["--index-base", "ENVDOCTOR_TORCH_INDEX"])
@pytest.mark.hostile("handled", "exit 2")
def test_index_credentials_are_never_shown_stored_or_in_argv(site, where):
    site.index.auth = "alice:s3cret-Pa55"
    site.index.add_torch(fake_torch(site.tmp, "2.14.1+cpu", requires=["fakedep>=2"]))
    url = site.url.replace("http://", "http://alice:s3cret-Pa55@") + "/whl"
    how = {"index_base": url} if where == "--index-base" else {"index_base": "", "env": {"ENVDOCTOR_TORCH_INDEX": url}}
    dry = fix(site, "--dry-run", **how)
    res = fix(site, "--yes", **how)
    assert res.returncode == 0, res.stderr[-3000:]
    assert json.loads(res.stdout)["status"] == "installed"
    assert site.index.authorized > 0  # pip did get the credentials
    assert [c for c in site.index.secret_in_argv if "-m envdoctor" not in c] == []  # only what the user typed
    for text in (dry.stdout, dry.stderr, res.stdout, res.stderr):
        assert "s3cret" not in text
    sdir = _state_dir(site)
    assert stat.S_IMODE(sdir.stat().st_mode) == 0o700
    for f in sdir.rglob("*"):
        if f.is_file() and f.parent == sdir:
            assert stat.S_IMODE(f.stat().st_mode) == 0o600, f
            assert "s3cret" not in f.read_text(errors="replace"), f
    assert "alice" not in (sdir / "last_fix.json").read_text()
    bad = fix(site, "--dry-run", index_base=url.replace("http://", "ftp://"))
    assert bad.returncode == 2 and "s3cret" not in bad.stderr


@pytest.mark.hostile("handled")
def test_the_plan_lists_every_package_pip_will_install_and_links_without_hashes(site, tmp_path):
    from tests.test_install import build_wheel

    extra = build_wheel(tmp_path, "extradep", "1.0", {"extradep/__init__.py": "V = 1\n"})
    site.index.add_simple(extra, "extradep", hashed=False)
    site.index.add_torch(fake_torch(site.tmp, "2.14.1+cpu", requires=["fakedep>=2", "extradep"]))
    before = freeze(site)
    res = fix(site, "--dry-run")
    assert res.returncode == 0, res.stderr[-3000:]
    doc = json.loads(res.stdout)
    got = {i["name"]: (i["version"], i["hashed"], i["requested"]) for i in doc["installs"]}
    assert got == {"torch": ("2.14.1+cpu", True, True), "fakedep": ("2.0", True, False), "extradep": ("1.0", False, False)}
    assert any(n.startswith("extradep 1.0: its index link has no hash") for n in doc["notes"])
    assert freeze(site) == before
    text = fix(site, "--dry-run", as_json=False).stdout
    assert "    extradep 1.0  [no hash on the index]" in text and "    fakedep 2.0\n" in text
    res = fix(site, "--yes")
    assert res.returncode == 0, res.stderr[-3000:]
    installed = {ln.split("==")[0] for ln in set(freeze(site).splitlines()) - set(before.splitlines())}
    assert installed == set(got)  # what the plan listed is what was installed


ESC = "\x1b]0;owned\x07\x1b[2J\u202e"


def _shown_escaped(res) -> bool:
    text = res.stdout + res.stderr
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text, text[-2000:]
    return "\\x1b]0;owned\\x07" in text


@pytest.mark.hostile("rolled back", "refused", "refused", "handled")
def test_fix_undo_and_check_messages_reach_the_terminal_escaped(site):
    # The new torch reports a version with terminal escapes: verification fails, says what it saw, rolls back.
    site.index.add_torch(fake_torch(site.tmp, "2.14.1+cpu", reports="2.14.1+cpu" + ESC, requires=["fakedep>=2"]))
    before = freeze(site)
    res = fix(site, "--yes", as_json=False)
    assert res.returncode == 3, res.stderr[-3000:]
    assert _shown_escaped(res) and "verification failed" in res.stderr
    assert freeze(site) == before
    # A journal whose fields hold escapes (damaged, or planted): fix, undo and check say so, escaped.
    plant_journal(_state_dir(site), {"op": "fix", "id": "x", "pid": 1, "started": "2026" + ESC, "before": {},
                                     "backup": str(site.tmp / ("backup" + ESC)), "roots": [], "before_files": {}})
    res = fix(site, "--yes", as_json=False)
    assert res.returncode == 3 and "was interrupted" in res.stderr and _shown_escaped(res)
    res = undo(site)
    assert res.returncode == 3 and "damaged" in res.stderr and _shown_escaped(res)
    res = subprocess.run([sys.executable, "-m", "envdoctor", "check", "--python", site.python], cwd=ROOT,
                         env=site.env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 1 and _shown_escaped(res)
    assert freeze(site) == before


def plant_journal(sdir, doc):
    """A journal file as any process could leave it: any keys, any values (the typed writer writes only good ones)."""
    write_private(sdir / JOURNAL, json.dumps({"schema": JOURNAL_SCHEMA, **doc}))


DAMAGED_JOURNALS = {
    "no-listing": {"before_files": None},
    "roots-not-a-list": {"roots": "/"},
    "bad-listing": {"before_files": {"/x": "big"}},
    "root-outside-the-env": {"roots": ["{elsewhere}"]},  # its rollback would delete every file there
    "undo-outside-the-env": {"op": "undo", "remove": ["{elsewhere}/canary"]},
}


@pytest.mark.hostile("refused")
@pytest.mark.parametrize("damage", list(DAMAGED_JOURNALS.values()), ids=list(DAMAGED_JOURNALS))
def test_undo_refuses_a_damaged_journal_before_touching_anything(site, damage):
    """A journal that lacks what its rollback needs, or reaches outside the environment (damaged, or planted
    next to a good backup)."""
    elsewhere = site.tmp / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "canary").write_text("still here")
    site.index.add_torch(fake_torch(site.tmp, "2.14.1+cpu", requires=["fakedep>=2"]))
    assert fix(site, "--yes").returncode == 0
    after = freeze(site)
    sdir = _state_dir(site)
    [bdir] = list(sdir.glob("backup*"))
    journal = {"op": "fix", "id": "y", "pid": 1, "started": "T", "before": {}, "backup": str(bdir), "roots": [],
               "before_files": {}}
    journal.update(json.loads(json.dumps(damage).replace("{elsewhere}", str(elsewhere))))
    plant_journal(sdir, journal)
    for res in (undo(site), undo(site)):
        assert res.returncode == 3, res.stderr
        assert "journal" in res.stderr and "is damaged" in res.stderr and "nothing was changed" in res.stderr
        assert not any(line.startswith("Traceback") for line in res.stderr.splitlines())
    assert freeze(site) == after and bdir.is_dir()
    assert (elsewhere / "canary").read_text() == "still here"
