"""tools/gpu_proof.sh on this CPU machine, as CI runs it: it reaches its end, every GPU step skipped with its
reason, nothing crashed, Textual blocked; and tools/gpu_proof_check.py catches a run that did not."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile

import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import gpu_proof_check

HEADER = "step\tstatus\trc\tseconds\tnote\n"


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("timeout") is None or shutil.which("nvidia-smi") is not None,
                    reason="needs coreutils' timeout and a machine without a GPU")
def test_the_proof_script_reaches_its_end_on_a_cpu_machine(tmp_path):
    out = tmp_path / "out"
    env = dict(os.environ, OUT=str(out), PYTHON=sys.executable, GPU_PROOF_BLOCK_TEXTUAL="1", GPU_PROOF_BUDGET="400")
    env.pop("PYTHONPATH", None)  # the script sets it to the repository itself
    proc = subprocess.run(["bash", str(ROOT / "tools" / "gpu_proof.sh")], env=env, capture_output=True, text=True,
                          timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert gpu_proof_check.problems(out, no_gpu=True) == [], (out / "summary.md").read_text()
    steps = {r["step"]: r for r in gpu_proof_check.read_steps(out)}
    assert "torch" in steps["selftest_backward"]["note"] and "no usable GPU" in steps["selftest_backward"]["note"]
    assert steps["check"]["status"] == "ok"  # with `import textual` failing: the CLI does not need it
    summary = (out / "summary.md").read_text()
    assert "| snapshot | ok |" in summary and "GPU facts: envdoctor snapshot vs nvidia-smi -q" in summary
    assert len([p for p in out.iterdir()]) <= 8
    with tarfile.open(out / "gpu_proof.tar.gz") as tar:
        assert "./check.out" in tar.getnames() and "./collect_env.out" in tar.getnames()


def _fake_run(tmp_path, rows, archive=True):
    out = tmp_path / "out"
    out.mkdir()
    (out / "steps.tsv").write_text(HEADER + "".join("\t".join(r) + "\n" for r in rows))
    if archive:
        work = tmp_path / "w"
        work.mkdir()
        (work / "selftest_gpu.out").write_text('{"tests": [{"name": "gpu", "status": "skipped", "error": "no CUDA"}]}')
        with tarfile.open(out / "gpu_proof.tar.gz", "w:gz") as tar:
            tar.add(work, arcname=".")
    return out


def _all_rows(**status):
    rows = [[n, status.get(n, "ok"), "0", "1", ""] for n in gpu_proof_check.EVERYWHERE]
    rows += [[n, status.get(n, "skipped"), "-", "0", "no usable GPU"] for n in gpu_proof_check.GPU_STEPS]
    return rows + [["END", "done", "-", "30", ""]]


def test_check_accepts_a_clean_cpu_run(tmp_path):
    assert gpu_proof_check.problems(_fake_run(tmp_path, _all_rows()), no_gpu=True) == []


def test_check_names_a_crash_a_missing_end_and_a_gpu_step_that_ran(tmp_path):
    rows = [r for r in _all_rows(check="crashed", selftest_backward="ok") if r[0] != "END"]
    got = gpu_proof_check.problems(_fake_run(tmp_path, rows), no_gpu=True)
    assert any("did not reach its end" in p for p in got)
    assert any(p.startswith("step check: crashed") for p in got)
    assert any("selftest_backward needs a GPU but was ok" in p for p in got)


def test_check_names_a_skip_without_reason_and_too_many_files(tmp_path):
    rows = _all_rows()
    rows[len(gpu_proof_check.EVERYWHERE)][4] = ""
    out = _fake_run(tmp_path, rows)
    for i in range(8):
        (out / f"extra{i}.txt").write_text("x")
    got = gpu_proof_check.problems(out, no_gpu=True)
    assert any("skipped without a reason" in p for p in got) and any("at most 8 come back" in p for p in got)
