"""Issue 30.12, the smaller ones: an unreadable state directory is unknown (not an interrupted fix), NaN is no
value in a document, --timeout takes what ENVDOCTOR_TORCH_TIMEOUT takes, a relative XDG_CACHE_HOME is ignored,
--python "" is refused, and a snapshot may not claim more GPUs than a machine holds."""

from __future__ import annotations

import json
import types
from pathlib import Path

import pytest

from envdoctor import cli
from envdoctor.errors import InputError
from envdoctor.fix_journal import state_dir
from envdoctor.probes.context import target_python
from envdoctor.probes.pyenv import interrupted_fix
from envdoctor.settings import user_cache_dir
from envdoctor.snapshot import ProbeFailed
from tests.conftest import ROOT

SNAP = ROOT / "tests" / "fixtures" / "snapshots" / "b200_driver_575.json"


def test_a_state_directory_that_is_a_file_is_unknown_not_an_interrupted_fix(tmp_path):
    root = tmp_path / "state"
    sdir = state_dir("/some/venv", root)
    sdir.parent.mkdir(parents=True)
    sdir.write_text("not a directory")
    found = interrupted_fix(types.SimpleNamespace(state_root=root), "/some/venv")
    assert isinstance(found, ProbeFailed), found


def test_a_state_root_that_is_a_file_is_unknown_too(tmp_path):
    root = tmp_path / "state"
    root.write_text("")
    assert isinstance(interrupted_fix(types.SimpleNamespace(state_root=root), "/some/venv"), ProbeFailed)


def test_nan_from_a_snapshot_is_not_echoed_as_bare_nan(tmp_path, capsys):
    text = SNAP.read_text()
    doc = json.loads(text)
    doc["probes"][0]["seconds"] = "@NAN@"
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc).replace('"@NAN@"', "NaN"))
    code = cli.main(["check", "--snapshot", str(path), "--json"])
    out = capsys.readouterr().out
    assert code in (0, 1)
    json.loads(out, parse_constant=lambda c: pytest.fail(f"bare {c} in the document"))


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "0"])
def test_timeout_nan_or_inf_is_refused_like_the_environment_variable(value, capsys):
    assert cli.main(["check", "--snapshot", str(SNAP), "--timeout", value]) == 2
    assert "positive number of seconds" in capsys.readouterr().err


def test_a_relative_xdg_cache_home_is_ignored():
    assert user_cache_dir({"XDG_CACHE_HOME": "rel/cache", "HOME": "/home/u"}, "linux") == Path("/home/u/.cache/envdoctor")
    assert user_cache_dir({"XDG_CACHE_HOME": "/abs", "HOME": "/home/u"}, "linux") == Path("/abs/envdoctor")


def test_an_empty_python_is_refused_not_envdoctors_own_interpreter(capsys):
    with pytest.raises(InputError, match="empty interpreter path"):
        target_python("")
    assert cli.main(["fix", "--python", "", "--dry-run"]) == 2


@pytest.mark.parametrize("argv", [["check"], ["check", "--json"], ["report"], ["fix", "--dry-run"], ["fleet", "collect"],
                                  ["nccl", "diagnose", "x.log"], ["diagnose", "x.log"], ["selftest"]],
                         ids=lambda a: "-".join(a[:2]))
def test_an_empty_snapshot_path_is_refused_not_a_probe_of_this_machine(argv, capsys):
    # fuzz args/803573: `check --snapshot ''` probed the live machine (torch imported in a child: a hang under load)
    assert cli.main([*argv, "--snapshot", ""]) == 2
    assert "an empty path names no file" in capsys.readouterr().err


@pytest.mark.slow
def test_a_snapshot_claiming_160000_gpus_is_refused(tmp_path, capsys):
    doc = json.loads(SNAP.read_text())
    doc["gpus"] = doc["gpus"][:1] * 160_000
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    assert cli.main(["fix", "--target", str(path), "--dry-run"]) == 2
    assert "more than the 1024" in capsys.readouterr().err
