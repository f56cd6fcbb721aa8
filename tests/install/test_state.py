"""The per-environment lock and journal as `check` reads them, and suggested commands aimed at `--python`."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from envdoctor.errors import InputError
from envdoctor.findings import Finding, for_interpreter
from envdoctor.fix_journal import JOURNAL, Journal, journal_problem, state_dir
from envdoctor.fixes import manual
from envdoctor.install.state import EnvBusy, EnvLock, ensure_private_dir, read_journal, write_journal
from envdoctor.probes.base import ProbeContext
from envdoctor.probes.pyenv import interrupted_fix
from envdoctor.snapshot import is_unavailable, is_unknown
from tests.conftest import ROOT, SNAPSHOTS, diagnose_bundled

PREFIX = "/opt/envs/train"


def _holder(sdir):
    """A real process that holds the environment's lock until its stdin closes."""
    code = ("import sys; from pathlib import Path; from envdoctor.install.state import EnvLock\n"
            f"lock = EnvLock(Path({str(sdir)!r}), 'ENV').acquire(); print('held', flush=True); sys.stdin.read()")
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


@pytest.mark.hostile("handled")
def test_interrupted_fix_is_three_valued(tmp_path):
    root = tmp_path / "state"
    sdir = ensure_private_dir(state_dir(PREFIX, root))
    assert is_unknown(interrupted_fix(ProbeContext(state_root=None), PREFIX))  # not read: unknown, never "none"
    ctx = ProbeContext(state_root=root)
    assert is_unknown(interrupted_fix(ctx, None))
    assert is_unavailable(interrupted_fix(ctx, PREFIX))  # known: no journal
    write_journal(sdir, Journal(op="fix", id="1", pid=4242, started="T", phase="installing", before={}))
    holder = _holder(sdir)
    try:
        running = interrupted_fix(ctx, PREFIX)
        assert is_unavailable(running) and "is running now" in running.reason
    finally:
        holder.stdin.close()
        holder.wait(30)
    assert interrupted_fix(ctx, PREFIX) == "a fix started T by pid 4242 was interrupted (installing)"
    (sdir / "last_fix.json").write_text(json.dumps({"id": "1"}))  # killed after recording the fix: it finished
    assert is_unavailable(interrupted_fix(ctx, PREFIX))
    (sdir / "journal.json").write_text("{not json")
    assert "unreadable journal" in interrupted_fix(ctx, PREFIX)


@pytest.mark.hostile("refused")
def test_the_lock_names_the_process_that_holds_it(tmp_path):
    sdir = ensure_private_dir(tmp_path / "s")
    holder = _holder(sdir)
    try:
        with pytest.raises(EnvBusy, match=rf"another envdoctor fix is running on ENV \(pid {holder.pid}\)"):
            EnvLock(sdir, "ENV").acquire()
    finally:
        holder.stdin.close()
        holder.wait(30)
    with EnvLock(sdir, "ENV"):  # the kernel dropped the dead holder's lock
        pass


def test_suggested_commands_target_the_diagnosed_interpreter(snapshot_of):
    findings = diagnose_bundled(snapshot_of("broken_torch_a10g"))
    python = "/opt/my env/bin/python"
    aimed = [f for f in for_interpreter(findings, python) if f.commands]
    assert aimed
    for f in aimed:
        for cmd in f.commands:
            if cmd[:2] in (["envdoctor", "fix"], ["envdoctor", "undo"]):
                assert cmd[2:4] == ["--python", python], cmd
        assert "`envdoctor fix --python '/opt/my env/bin/python'" in f.fix or "envdoctor fix" not in f.fix, f.fix
    assert for_interpreter(findings, None) == findings


_UNAIMED = re.compile(r"`(?:pip3? |python3? |envdoctor (?:fix|undo|check|report|snapshot|selftest)\b(?![^`]*--python))")


def test_no_suggested_command_in_any_fixture_acts_on_another_interpreter(snapshot_of):
    """Across every bundled snapshot: no `pip ...`, `python ...` or envdoctor command without --python survives."""
    python = "/opt/my env/bin/python"
    aimed_texts = 0
    for path in sorted(SNAPSHOTS.glob("*.json")):
        for f in for_interpreter(diagnose_bundled(snapshot_of(path.stem)), python):
            assert not _UNAIMED.search(f.fix), (path.stem, f.id, f.fix)
            aimed_texts += "/opt/my env/bin/python'" in f.fix
            for cmd in f.commands:
                assert cmd[:1] != ["envdoctor"] or cmd[1] not in ("fix", "undo", "check") or "--python" in cmd, cmd
    assert aimed_texts > 10
    pip = Finding(id="X", severity="info", category="c", title="t", detail="d",
                  remedy=manual("Run `pip install ninja`, then `python -m pip check` and `python -c 'import torch'`; "
                                "`envdoctor check` again, `envdoctor report --markdown` to share; `uv venv --python 3.12`."))
    [out] = for_interpreter([pip], python)
    q = "'/opt/my env/bin/python'"
    assert out.fix == (f"Run `{q} -m pip install ninja`, then `{q} -m pip check` and `{q} -c 'import torch'`; "
                       f"`envdoctor check --python {q}` again, `envdoctor report --python {q} --markdown` to share; "
                       "`uv venv --python 3.12`.")


def test_report_for_another_interpreter_aims_its_commands_there(tmp_path):
    venv = tmp_path / "bare env"  # no torch: its findings suggest `envdoctor fix`
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(ROOT)
    res = subprocess.run([sys.executable, "-m", "envdoctor", "report", "--python", python, "--timeout", "60"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    assert "envdoctor fix" in res.stdout
    assert not _UNAIMED.search(res.stdout), res.stdout


# Journals as envdoctor wrote them before the record was typed (json.dumps of the installer's dicts).
OLD_FIX_JOURNAL = (
    '{"schema": "envdoctor.fix_journal/1", "op": "fix", "id": "20261120T093000-4242", "pid": 4242, '
    '"python": "/env/bin/python", "prefix": "/env", "started": "2026-11-20T09:30:00Z", "phase": "rolling_back", '
    '"before": {"torch": "2.5.1+cu124"}, "backup": "/state/ab/backup-20261120T093000-4242", '
    '"roots": ["/env/lib/python3.11/site-packages"], "packages": [{"name": "torch", "version": "2.6.0+cu124"}], '
    '"before_files": {"/env/lib/python3.11/site-packages/torch/__init__.py": [1234, 1732095000000000000]}}')
OLD_UNDO_JOURNAL = (
    '{"schema": "envdoctor.fix_journal/1", "op": "undo", "id": null, "pid": 77, "python": "/env/bin/python", '
    '"prefix": "/env", "started": "2026-11-21T10:00:00Z", "before": {"torch": "2.5.1+cu124"}, '
    '"backup": "/state/ab/backup-1", "remove": ["/env/lib/python3.11/site-packages/torch/version.py"]}')


@pytest.mark.parametrize("text", [OLD_FIX_JOURNAL, OLD_UNDO_JOURNAL], ids=["fix", "undo"])
def test_a_journal_the_old_code_wrote_reads_typed_and_writes_back_the_same(tmp_path, text):
    sdir = ensure_private_dir(tmp_path / "s")
    (sdir / JOURNAL).write_text(text)
    journal = read_journal(sdir)
    assert isinstance(journal, Journal) and journal.malformed == ()
    assert journal.before == {"torch": "2.5.1+cu124"} and journal.prefix == "/env"
    if journal.op == "fix":
        assert journal.phase == "rolling_back" and journal.roots == ["/env/lib/python3.11/site-packages"]
        assert journal.before_files == {"/env/lib/python3.11/site-packages/torch/__init__.py": [1234, 1732095000000000000]}
        assert journal.describe() == "a fix started 2026-11-20T09:30:00Z by pid 4242"
    else:
        assert journal.id is None and journal.remove == ["/env/lib/python3.11/site-packages/torch/version.py"]
        assert journal.describe() == "an undo started 2026-11-21T10:00:00Z by pid 77"
    write_journal(sdir, journal)
    assert (sdir / JOURNAL).read_text() == text


def test_a_journal_keeps_keys_it_does_not_know_and_names_what_is_malformed(tmp_path):
    sdir = ensure_private_dir(tmp_path / "s")
    doc = json.loads(OLD_FIX_JOURNAL)
    doc.update(roots="/", before_files={"/x": "big"}, pid="many", note={"by": "a later envdoctor"})
    (sdir / JOURNAL).write_text(json.dumps(doc))
    journal = read_journal(sdir)
    assert journal.malformed == ("pid", "roots", "before_files")
    assert journal.roots is None and journal.before_files is None and journal.pid is None
    assert journal.extra == {"note": {"by": "a later envdoctor"}}
    assert journal_problem(journal, ["/env/lib/python3.11/site-packages"], lambda p: True) == (
        "no listing of the files from before the fix")
    assert journal.to_json()["note"] == {"by": "a later envdoctor"}


def test_what_is_not_a_journal_is_refused(tmp_path):
    sdir = ensure_private_dir(tmp_path / "s")
    for text in ('{"schema": "envdoctor.fix_journal/2", "before": {}}', '{"schema": "envdoctor.fix_journal/1"}', "[]"):
        (sdir / JOURNAL).write_text(text)
        with pytest.raises(InputError, match="damaged"):
            read_journal(sdir)
