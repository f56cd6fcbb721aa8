"""A report as a snapshot (everything unstated unknown) and merged into a probed one (the base's knowns win)."""

from __future__ import annotations

from pathlib import Path

import pytest

from envdoctor.jsonschema_lite import validate_snapshot
from envdoctor.snapshot import is_unavailable, is_unknown, load_snapshot
from envdoctor.text import report_document, report_notes, snapshot_from_report
from tests.text.helpers import FIXTURES, read
from tests.text.test_stream import PIP_LIST

BASE = Path(__file__).resolve().parents[1] / "fixtures" / "snapshots" / "a100_gen3_idle.json"
ALL = sorted(p.name for p in FIXTURES.glob("*.txt"))


@pytest.mark.parametrize("name", ALL)
def test_every_fixture_makes_a_valid_snapshot(name: str) -> None:
    facts = read(name)
    doc = report_document(facts, created="2026-12-02T00:00:00Z")
    assert validate_snapshot(doc) == []
    snap = snapshot_from_report(facts, created="2026-12-02T00:00:00Z")
    assert [s["kind"] for s in report_notes(snap)["sections"]] == [s.kind for s in facts.sections]


def test_unstated_is_unknown_never_absent() -> None:
    snap = snapshot_from_report(read("collect_env_a100_vllm4066.txt"), created="2026-12-02T00:00:00Z")
    assert snap.torch.version == "1.12.1+cu113" and snap.driver.version == "525.105.17"
    assert snap.gpus[0].name == "NVIDIA A100-SXM4-80GB"
    assert is_unknown(snap.torch.cudnn) and not is_unavailable(snap.torch.cudnn)
    assert snap.gpus[0].compute_capability == "8.0"  # derived from the name (report notes say so)
    assert "gpus.0.compute_capability" in report_notes(snap)["derived"]
    assert is_unknown(snap.package("numpy"))  # no package list stated: unknown, not "not installed"
    assert is_unknown(snap.deepspeed) and is_unknown(snap.env)
    probes = {p.name: (p.status, p.error) for p in snap.probes}
    assert probes["nvml"] == ("ok", None) and probes["network"] == ("skipped", "not in the report")


def test_stated_absence_and_partial_lists() -> None:
    snap = snapshot_from_report(read("collect_env_rocm_pt44106.txt"), created="2026-12-02T00:00:00Z")
    assert is_unavailable(snap.torch.cuda) and "ROCm build" in snap.torch.cuda.reason
    assert is_unknown(snap.driver)  # "Could not collect"
    assert snap.package("numpy") == "1.18.5"
    assert is_unknown(snap.package("scipy"))  # collect_env's list is partial


def test_whole_pip_list_says_not_installed() -> None:
    snap = snapshot_from_report(read(PIP_LIST), created="2026-12-02T00:00:00Z")
    assert snap.package("torch") == "2.3.0"
    assert is_unavailable(snap.package("xformers"))


def test_required_values_the_report_lacks_are_assumed_and_said() -> None:
    snap = snapshot_from_report(read("nvidia_smi_p4_wyoming20.txt"), created="2026-12-02T00:00:00Z")
    notes = report_notes(snap)
    assert snap.host.os == "other" and set(notes["assumed"]) == {"host.os", "host.arch", "python.version"}
    assert is_unknown(snap.torch)


def test_merge_base_wins_report_fills_unknowns() -> None:
    base = load_snapshot(BASE)
    assert base.driver.version == "535.104.05"
    report = read("\n".join([
        "| NVIDIA-SMI 550.54.15   Driver Version: 550.54.15   CUDA Version: 12.4 |",
        "DeepSpeed general environment info:",
        "deepspeed info ................... 0.14.4, unknown, unknown",
        "deepspeed wheel compiled w. ...... torch 2.2, cuda 12.1",
    ]))
    merged = snapshot_from_report(report, base=base)
    assert merged.driver.version == "535.104.05"  # the probed fact wins
    disagreements = report_notes(merged)["disagreements"]
    assert {"path": "driver.version", "kept": "535.104.05", "stated": "550.54.15",
            "line": "| NVIDIA-SMI 550.54.15   Driver Version: 550.54.15   CUDA Version: 12.4 |", "line_no": 1} in disagreements
    if not is_unavailable(base.deepspeed):
        assert merged.deepspeed.version in (base.deepspeed.version, "0.14.4")
    assert merged.torch.version == base.torch.version and merged.gpus == base.gpus


def test_merge_fills_what_the_base_does_not_know(tmp_path: Path) -> None:
    doc = load_snapshot(BASE).to_json()
    doc["cuda_toolkit"] = None  # unknown in the base
    doc["absent"].pop("cuda_toolkit", None)
    path = tmp_path / "base.json"
    import json

    path.write_text(json.dumps(doc), encoding="utf-8")
    merged = snapshot_from_report(read("ds_report_full_green_ai.txt"), base=load_snapshot(path))
    assert merged.cuda_toolkit.nvcc_version == "11.1"
    disagreements = {d["path"]: d for d in report_notes(merged)["disagreements"]}
    assert disagreements["torch.version"]["kept"] == load_snapshot(BASE).torch.version
    assert disagreements["torch.version"]["stated"] == "1.8.1+cu111"
    # DeepSpeed is known not installed in the base: the report's DeepSpeed is a disagreement, with its first line
    assert disagreements["deepspeed"]["kept"] is None and disagreements["deepspeed"]["line_no"] == 13


def test_merge_whole_base_list_is_kept_and_report_extras_are_disagreements() -> None:
    base = load_snapshot(BASE)  # its package list is whole (no `partial` entry)
    report = read("Package    Version\n---------- -------\nnumpy      1.26.4\nxformers   0.0.26\n")
    merged = snapshot_from_report(report, base=base)
    assert merged.python.packages == base.python.packages
    assert is_unavailable(merged.package("xformers"))  # the probed whole list says it is not installed
    disagreements = {d["path"]: d for d in report_notes(merged)["disagreements"]}
    assert disagreements["python.packages.xformers"] == {
        "path": "python.packages.xformers", "kept": None, "stated": "0.0.26", "line": "xformers   0.0.26", "line_no": 4}
    assert "python.packages.numpy" not in disagreements  # the same version: no disagreement
    assert [e.name for e in merged.extensions] == [e.name for e in base.extensions]  # the probed list stays
    assert disagreements["extensions.xformers"]["line_no"] == 4
