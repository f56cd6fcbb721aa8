"""`envdoctor nccl diagnose`: exit codes, text and JSON output, stdin."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.nccl.helpers import FIXTURES, ROOT


def run(*args: str, stdin: str = None):
    return subprocess.run([sys.executable, "-m", "envdoctor", "nccl", "diagnose", *args], cwd=ROOT,
                          capture_output=True, text=True, input=stdin, timeout=60)


def test_failure_diagnosed_exits_1_with_root_cause_first() -> None:
    out = run(str(FIXTURES / "timeout_rank_crashed.log"))
    assert out.returncode == 1, out.stderr
    assert "1. Another rank crashed; the timeouts on the surviving ranks are only a symptom" in out.stdout
    assert "1. timeout_rank_crashed" not in out.stdout  # people read the words; the JSON keeps the category
    assert "most likely root cause, high confidence" in out.stdout
    assert "CUDA out of memory" in out.stdout and "fix:" in out.stdout


def test_json_several_files_and_facts(tmp_path: Path) -> None:
    out = run(str(FIXTURES / "healthy_single_node.txt"), str(FIXTURES / "shm_exhausted.log"), "--json")
    assert out.returncode == 1
    doc = json.loads(out.stdout)
    assert doc["schema"] == "envdoctor.nccl/1" and doc["findings"][0]["category"] == "shm_exhausted"
    assert doc["findings"][0]["locations"][0].startswith(str(FIXTURES / "shm_exhausted.log") + ":")
    assert doc["facts"]["nccl_versions"] == ["2.10.3", "2.21.5"]
    assert len(doc["inputs"]) == 2


def test_no_recognisable_failure_exits_0_and_says_so(tmp_path: Path) -> None:
    out = run(str(FIXTURES / "healthy_single_node.txt"))
    assert out.returncode == 0 and "No recognisable NCCL failure" in out.stdout
    doc = json.loads(run(str(FIXTURES / "healthy_single_node.txt"), "--json").stdout)
    assert doc["findings"] == [] and doc["summary"]["failure_diagnosed"] is False
    assert doc["summary"]["message"] == "No recognisable NCCL failure in the input."


def test_warning_only_findings_exit_0() -> None:
    out = run(str(FIXTURES / "gdr_disabled.log"), "--json")
    doc = json.loads(out.stdout)
    assert out.returncode == 0 and doc["findings"][0]["category"] == "gdr_disabled"
    assert doc["findings"][0]["severity"] == "warning"


def test_stdin() -> None:
    text = (FIXTURES / "port_in_use.log").read_text()
    for args in ((), ("-",)):
        out = run(*args, "--json", stdin=text)
        assert out.returncode == 1
        assert json.loads(out.stdout)["findings"][0]["category"] == "port_in_use"


def test_unreadable_inputs_exit_2_naming_them(tmp_path: Path) -> None:
    missing = tmp_path / "nope.log"
    out = run(str(FIXTURES / "shm_exhausted.log"), str(missing))
    assert out.returncode == 2 and out.stdout == "" and f"{missing}: no such file" in out.stderr
    out = run(str(tmp_path))
    assert out.returncode == 2 and f"{tmp_path}: is a directory" in out.stderr
    locked = tmp_path / "locked.log"
    locked.write_text("x")
    locked.chmod(0)
    try:
        readable = locked.open("rb")  # root reads anything
        readable.close()
    except PermissionError:
        out = run(str(locked))
        assert out.returncode == 2 and str(locked) in out.stderr
    finally:
        locked.chmod(0o644)


def test_bare_nccl_command_shows_usage() -> None:
    out = subprocess.run([sys.executable, "-m", "envdoctor", "nccl"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "diagnose" in out.stderr


def test_a_rules_dir_setting_reaches_nccl_diagnose(tmp_path: Path, monkeypatch) -> None:
    """ENVDOCTOR_RULES_DIR changes the NCCL root causes too, as it changes `rules list/explain`."""
    import shutil

    rules = tmp_path / "rules"
    shutil.copytree(ROOT / "rules", rules)
    doc = json.loads((rules / "nccl" / "categories.json").read_text(encoding="utf-8"))
    first = json.loads(run("--json", str(FIXTURES / "timeout_rank_crashed.log")).stdout)["findings"][0]
    for cat in doc["categories"]:
        if cat["id"] == first["category"]:
            cat["title"] = "A retitled root cause"
    (rules / "nccl" / "categories.json").write_text(json.dumps(doc), encoding="utf-8")
    monkeypatch.setenv("ENVDOCTOR_RULES_DIR", str(rules))
    again = json.loads(run("--json", str(FIXTURES / "timeout_rank_crashed.log")).stdout)["findings"][0]
    assert again["category"] == first["category"] and again["title"] == "A retitled root cause"
