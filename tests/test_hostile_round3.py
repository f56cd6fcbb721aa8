"""Issue 30 items 7, 8, 10 and 12: hostile inputs are exit 2 (or a verdict) with a clear message, never an internal
error (exit 70); argparse's messages, `rules explain` and crash files keep what they quote safe."""

from __future__ import annotations

import copy
import json
import os
import stat

import pytest

from envdoctor import cli
from tests.conftest import ROOT

SNAP = ROOT / "tests" / "fixtures" / "snapshots" / "b200_driver_575.json"
LOG = ROOT / "tests" / "fixtures" / "nccl" / "cumem_host.log"
BIG = "1" * 5000


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    for k in [k for k in os.environ if k.startswith("ENVDOCTOR_")]:
        monkeypatch.delenv(k)


def _snap() -> dict:
    return json.loads(SNAP.read_text())


def _write(tmp_path, name, doc=None, raw=None):
    p = tmp_path / name
    p.write_text(raw if raw is not None else json.dumps(doc), encoding="utf-8", errors="surrogatepass")
    return str(p)


def _run(capsys, argv):
    code = cli.main(argv)
    out = capsys.readouterr()
    assert code != 70, out.err
    return code, out.out, out.err


def test_a_5000_digit_integer_in_a_snapshot_is_exit_2(tmp_path, capsys):
    raw = SNAP.read_text().replace('"schema"', f'"zz": {BIG}, "schema"', 1)
    code, _out, err = _run(capsys, ["check", "--snapshot", _write(tmp_path, "s.json", raw=raw)])
    assert code == 2 and "number too long" in err


def test_a_5000_digit_integer_in_a_wheel_index_is_exit_2(tmp_path, capsys, monkeypatch):
    raw = (ROOT / "wheels_index.json").read_text().replace("{", f'{{"zz": {BIG}, ', 1)
    monkeypatch.setenv("ENVDOCTOR_WHEELS_INDEX", _write(tmp_path, "idx.json", raw=raw))
    code, _out, err = _run(capsys, ["check", "--snapshot", str(SNAP)])
    assert code == 2 and "number too long" in err


@pytest.mark.parametrize("line", [f"NCCL version 2.18.{BIG}+cuda12.2",
                                  f"h:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks {BIG} cudaDev 0 busId 1000 - Init"],
                         ids=["version", "nranks"])
def test_a_5000_digit_number_in_an_nccl_log_is_no_internal_error(tmp_path, capsys, line):
    log = tmp_path / "r0.log"
    log.write_text(line + "\n" + LOG.read_text())
    code, out, _err = _run(capsys, ["nccl", "diagnose", str(log)])
    assert code in (0, 1) and out


def test_a_lone_surrogate_in_a_host_name_is_shown_escaped(tmp_path, capsys):
    doc = _snap()
    doc["host"]["hostname"] = "\ud800node"
    code, out, _err = _run(capsys, ["check", "--snapshot", _write(tmp_path, "s.json", raw=json.dumps(doc)), "--facts"])
    assert code in (0, 1)
    out.encode("utf-8")  # printable: no lone surrogate left to fail the terminal's encoder


@pytest.mark.parametrize("argv", [["check", "--snapshot", "{gn}", "--baseline", "{ok}"],
                                  ["check", "--snapshot", "{ok}", "--baseline", "{gn}"],
                                  ["fleet", "{gn}", "{ok}"], ["fleet", "{gn}", "{ok}", "--json"],
                                  ["check", "--snapshot", "{gn}", "--facts"]])
def test_an_unknown_gpu_list_with_a_baseline_or_in_a_fleet_is_no_internal_error(tmp_path, capsys, argv):
    doc = _snap()
    doc["gpus"] = None
    paths = {"{gn}": _write(tmp_path, "gn.json", doc), "{ok}": str(SNAP)}
    _run(capsys, [paths.get(a, a) for a in argv])


def test_500_deep_nesting_under_json_is_no_internal_error(tmp_path, capsys):
    doc = _snap()
    doc["extra"] = json.loads("[" * 500 + "]" * 500)
    code, out, _err = _run(capsys, ["check", "--snapshot", _write(tmp_path, "s.json", doc), "--json"])
    assert code in (0, 1, 2)


def test_an_index_base_that_is_no_url_is_exit_2(capsys):
    code, _out, err = _run(capsys, ["fix", "--snapshot", str(SNAP), "--dry-run", "--index-base", "http://[::1"])
    assert code == 2 and "--index-base" in err


def test_a_rules_dir_name_of_5000_characters_is_exit_2(capsys, monkeypatch):
    monkeypatch.setenv("ENVDOCTOR_RULES_DIR", "r" * 5000)
    code, _out, err = _run(capsys, ["check", "--snapshot", str(SNAP)])
    assert code == 2 and "ENVDOCTOR_RULES_DIR" in err


def test_argparse_messages_are_escaped_and_scrubbed(capsys):
    code, _out, err = _run(capsys, ["check", "\x1b[2J", "\u202e", "https://u:hunter2pw@h/x"])
    assert code == 2 and "unrecognized arguments" in err
    assert "\x1b" not in err and "\u202e" not in err and "hunter2pw" not in err
    code, _out, err = _run(capsys, ["rules", "\x1b]0;owned\x07"])
    assert code == 2 and "\x1b" not in err and "\x07" not in err


def test_rules_explain_prints_a_rules_databases_text_escaped(tmp_path, capsys, monkeypatch):
    import shutil

    rules = tmp_path / "rules"
    shutil.copytree(ROOT / "rules", rules)
    torch = json.loads((rules / "torch.json").read_text())
    items = torch["rules"] if isinstance(torch, dict) else torch
    items[0]["title"] = "owned \x1b]0;pwned\x07 \u202etxt"
    (rules / "torch.json").write_text(json.dumps(torch))
    monkeypatch.setenv("ENVDOCTOR_RULES_DIR", str(rules))
    code, out, err = _run(capsys, ["rules", "explain", items[0]["id"]])
    assert code == 0 and "owned" in out, err
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out


def test_a_crash_file_is_mode_0600(tmp_path, capsys, monkeypatch):
    def boom(_args):
        raise RuntimeError("a bug")

    monkeypatch.setattr(cli, "_run", boom)
    assert cli.main(["check"]) == 70
    err = capsys.readouterr().err
    path = err.split("traceback in ")[1].rstrip(")\n")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_schema_error_excerpts_are_scrubbed_before_they_are_cut(tmp_path, capsys):
    """Item 7: a URL with credentials in a field of the wrong type: the exit-2 message must not show its password."""
    doc = copy.deepcopy(_snap())
    doc["driver"] = "https://someuser:hunter2secretpw" + "z" * 30 + "@" + "x" * 80  # its @ past the cut
    code, _out, err = _run(capsys, ["check", "--snapshot", _write(tmp_path, "s.json", doc)])
    assert "hunter2" not in err and "secretpw" not in err


def test_a_rules_file_nested_600_deep_is_exit_2(tmp_path, capsys, monkeypatch):
    import shutil

    rules = tmp_path / "rules"
    shutil.copytree(ROOT / "rules", rules)
    torch = json.loads((rules / "torch.json").read_text())
    items = torch["rules"] if isinstance(torch, dict) else torch
    items[0]["detail"] = json.loads("[" * 600 + "]" * 600)
    (rules / "torch.json").write_text(json.dumps(torch))
    monkeypatch.setenv("ENVDOCTOR_RULES_DIR", str(rules))
    code, _out, err = _run(capsys, ["rules", "list"])
    assert code == 2 and "nested" in err



def test_a_nvcc_version_that_is_no_version_is_unknown_to_the_deepspeed_plan_not_a_crash(tmp_path, capsys):
    """fuzz snapshot/2473: `fix --snapshot S --dry-run --deepspeed` with cuda_toolkit.nvcc_version a URL was exit 70."""
    import json

    from envdoctor import cli
    from tests.conftest import ROOT

    doc = json.loads((ROOT / "tests" / "fixtures" / "snapshots" / "h100_8x_nvswitch.json").read_text())
    doc.setdefault("cuda_toolkit", {})["nvcc_version"] = "https://h/b?a=1"
    snap = tmp_path / "s.json"
    snap.write_text(json.dumps(doc))
    code = cli.main(["fix", "--snapshot", str(snap), "--dry-run", "--deepspeed"])
    assert code in (0, 1, 2), code
    assert "internal error" not in capsys.readouterr().err


def test_a_len_condition_with_an_unhashable_comparison_is_a_rules_error_not_a_crash():
    """fuzz rules/7117: {"len": ["gpus", [], 1]} in a rules file was a TypeError (exit 70)."""
    from envdoctor.rules.conditions import check_condition

    problems = check_condition({"len": ["gpus", [], 1]}, {}, {})
    assert problems and "'len' takes" in problems[0]


def test_a_some_condition_whose_name_is_no_string_is_a_rules_error_not_a_crash():
    """fuzz rules/4023688: {"some": {"in": ..., "as": [], "where": ...}} was a TypeError (exit 70)."""
    from envdoctor.rules.conditions import check_condition

    problems = check_condition({"some": {"in": "gpus", "as": ["g"], "where": {"present": "g.name"}}}, {}, {})
    assert problems and "'some' takes" in problems[0]


def test_a_gpu_whose_name_is_unknown_beside_named_ones_is_compared_not_a_crash():
    """fuzz snapshot/4045516: one GPU's name unknown among named ones made the drift comparison sort a str with an
    unknown (TypeError, exit 70)."""
    from envdoctor.rules.drift import _gpus
    from envdoctor.snapshot import NOT_RECORDED, load_snapshot
    from tests.conftest import fixture_path

    snap = load_snapshot(fixture_path("a100_pcie_8x"))
    snap.gpus[0].name = NOT_RECORDED
    assert _gpus(snap) == "7x NVIDIA A100 80GB PCIe, 1x unknown"


@pytest.mark.parametrize("command", [["check", "--json"], ["fix", "--dry-run", "--json"]])
def test_deepspeeds_installed_ops_that_are_no_mapping_are_unknown_not_a_crash(tmp_path, capsys, command):
    """fuzz snapshot/5019406: `installed_ops` a string made `fix --snapshot` an AttributeError (exit 70)."""
    import json

    from envdoctor import cli
    from tests.conftest import fixture_path

    doc = json.loads(fixture_path("deepspeed_stale_ops").read_text())
    doc["deepspeed"]["installed_ops"] = "cpu_adam"
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    code = cli.main([command[0], "--snapshot", str(path), *command[1:]])
    assert code in (0, 1), capsys.readouterr().err[-2000:]


def test_a_fleet_node_nested_too_deep_is_refused_not_a_recursion_error(tmp_path, capsys):
    """fuzz snapshot/959: a recorded snapshot with a 600-deep value among fleet nodes was a RecursionError (exit 70)."""
    import json

    from envdoctor import cli
    from tests.conftest import ROOT

    real = (ROOT / "tests" / "fixtures" / "snapshots" / "h100_8x_nvswitch.json").read_text()
    deep: dict = {}
    node = deep
    for _ in range(600):
        node["a"] = {}
        node = node["a"]
    doc = json.loads(real)
    doc["env"] = deep
    (tmp_path / "s.json").write_text(json.dumps(doc))
    (tmp_path / "b.json").write_text(real)
    code = cli.main(["fleet", str(tmp_path / "s.json"), str(tmp_path / "b.json")])
    assert code in (1, 2)
    assert "internal error" not in capsys.readouterr().err


ARABIC_INDIC = str.maketrans("0123456789", "\u0660\u0661\u0662\u0663\u0664\u0665\u0666\u0667\u0668\u0669")


@pytest.mark.parametrize("path", ["driver.version", "driver.cuda_driver_version", "python.version",
                                  "python.packages.torch", "python.packages.deepspeed", "torch.version", "torch.cuda",
                                  "torch.nccl", "cuda_toolkit.nvcc_version", "deepspeed.version", "host.glibc"])
def test_arabic_indic_digits_in_a_version_are_no_crash_of_the_deepspeed_plan(tmp_path, capsys, path):
    """Item 10: a version written in Arabic-Indic digits (which str.isdigit() and int() take) under
    `fix --deepspeed --dry-run` was exit 70."""
    doc = json.loads((ROOT / "tests" / "fixtures" / "snapshots" / "deepspeed_stale_ops.json").read_text())
    *parents, leaf = path.split(".")
    node = doc
    for key in parents:
        node = node.setdefault(key, {})
    node[leaf] = str(node.get(leaf) or "2.14.1").translate(ARABIC_INDIC)
    code, out, err = _run(capsys, ["fix", "--snapshot", _write(tmp_path, "s.json", doc), "--dry-run", "--deepspeed"])
    assert code in (0, 1, 2), err
    assert "internal error" not in err and "Traceback" not in err + out
    if code == 2:
        assert err.strip(), "exit 2 without a message"


@pytest.mark.parametrize("spec", ["\u0661\u0662", "\u0662.\u0661\u0664", "==\u0660.\u0661\u0664.\u0662"])
def test_an_arabic_indic_deepspeed_version_wish_is_exit_2(spec, capsys):
    code, _out, err = _run(capsys, ["fix", "--snapshot", str(SNAP), "--dry-run", "--deepspeed", spec])
    assert code == 2 and "not a version specifier" in err
