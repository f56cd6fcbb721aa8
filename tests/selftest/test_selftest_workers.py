"""The workers' shared main() scaffold (workers/_common.worker_main), in the target interpreter as they run."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from envdoctor.selftest.result import WORKERS

SCRIPT = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from _common import worker_main

def add(p):
    p.add_argument("--say", default="")

def passes(torch, args, result, progress):
    progress("said " + args.say)
    result.update(ok=True, said=args.say)

def skips(torch, args, result, progress):
    result.update(skipped=True, error="nothing to test here")

def raises(torch, args, result, progress):
    result["partial"] = 1
    raise RuntimeError("boom")

def classified(exc, result):
    result.update(error="classified: %s" % exc, kind="mine")

out = sys.argv[2]
codes = [
    worker_main(add, passes, ["--out", out + ".pass", "--progress", out + ".progress", "--say", "hi"]),
    worker_main(add, skips, ["--out", out + ".skip"], {"skipped": False}),
    worker_main(add, raises, ["--out", out + ".raise"]),
    worker_main(add, raises, ["--out", out + ".classified"], {"kind": None}, classified),
]
print(json.dumps(codes))
"""


@pytest.mark.slow
def test_the_scaffold_writes_the_result_whatever_the_body_does(tmp_path):
    out = tmp_path / "r"
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(WORKERS), str(out)], capture_output=True, text=True,
                          timeout=240, check=True)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [0, 0, 1, 1]  # ok and skipped exit 0, else 1

    def read(suffix):
        return json.loads((tmp_path / f"r.{suffix}").read_text())

    passed = read("pass")
    assert passed["ok"] and passed["said"] == "hi" and passed["error"] is None and passed["torch"]
    assert (tmp_path / "r.progress").read_text() == "said hi\n"
    assert read("skip") == {"ok": False, "error": "nothing to test here", "skipped": True, "torch": passed["torch"]}
    raised = read("raise")
    assert not raised["ok"] and raised["partial"] == 1 and "RuntimeError: boom" in raised["error"]
    assert "Traceback" in raised["error"]  # the last frames, for the report
    classified = read("classified")
    assert classified["error"] == "classified: boom" and classified["kind"] == "mine"
