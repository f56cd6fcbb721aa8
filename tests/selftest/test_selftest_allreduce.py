"""`selftest allreduce` for real: gloo ranks through torch's launcher on this machine (spawns torch processes)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from envdoctor.selftest.bandwidth import size_done

from .conftest import by_name, cli, doc, free_port, popen_cli

pytestmark = pytest.mark.slow

SMALL = ["--max-size", "64K", "--iters", "5"]  # 7 sizes, 8 collectives each: a test run, not a benchmark


def test_two_gloo_ranks_pass(marker):
    proc = cli(["selftest", "allreduce", "--nproc", "2", "--backend", "gloo", "--json", *SMALL],
               env={"ENVDOCTOR_TEST_MARK": marker})
    assert proc.returncode == 0, proc.stderr
    t = by_name(doc(proc), "allreduce")
    assert t["status"] == "passed" and t["error"] is None and t["findings"] == []
    m = t["metrics"]
    assert m["world_size"] == 2 and m["backend"] == "gloo" and m["correct"] is True
    assert sorted(m["busbw_gbps"], key=int) == [str(1024 << i) for i in range(7)]
    assert all(v > 0 for v in m["busbw_gbps"].values())
    assert m["busbw_gbps"] == m["algbw_gbps"]  # 2(n-1)/n = 1 for two ranks
    assert set(m["iters"].values()) == {5}
    assert m["ddp"]["grads_identical"] and m["ddp"]["params_identical_after_step"]
    assert m["ddp"]["max_rel_grad_diff"] <= 1e-5
    assert "2 ranks joined (gloo)" in proc.stderr  # progress on stderr
    assert "using gloo" not in proc.stderr  # asked for: nothing to announce
    sizes = [size_done(line.partition("envdoctor selftest:")[2]) for line in proc.stderr.splitlines()]
    assert [s[0] for s in sizes if s] == [1024 << i for i in range(7)]  # one progress line per size, in order


def test_without_gpus_the_fallback_to_gloo_is_announced(marker):
    proc = cli(["selftest", "allreduce", "--nproc", "2", "--json", *SMALL], env={"ENVDOCTOR_TEST_MARK": marker})
    assert proc.returncode == 0, proc.stderr
    assert by_name(doc(proc), "allreduce")["metrics"]["backend"] == "gloo"
    assert "allreduce: nccl needs CUDA GPUs and" in proc.stderr and "using gloo on the CPU instead" in proc.stderr


def test_two_nodes_meet_through_c10d_rendezvous(marker):
    port = free_port()
    common = ["selftest", "allreduce", "--nnodes", "2", "--nproc", "1", "--backend", "gloo", "--json",
              "--rdzv-endpoint", f"127.0.0.1:{port}", "--timeout", "120", *SMALL]
    env = {"ENVDOCTOR_TEST_MARK": marker}
    nodes = [popen_cli([*common, "--node-rank", str(r)], env) for r in (0, 1)]
    outs = [n.communicate(timeout=240) for n in nodes]
    for n, (out, err) in zip(nodes, outs):
        assert n.returncode == 0, err
        t = by_name(json.loads(out), "allreduce")
        assert t["status"] == "passed"
        assert t["metrics"]["world_size"] == 2 and t["metrics"]["nnodes"] == 2
        assert len(t["metrics"]["ranks_reported"]) == 1  # each node reports the rank it started
    reported = sorted(json.loads(o)["tests"][0]["metrics"]["ranks_reported"][0] for o, _ in outs)
    assert reported == [0, 1]
    # the ranks reduce the timings, so both nodes report the same bandwidth
    bw = [json.loads(o)["tests"][0]["metrics"]["busbw_gbps"] for o, _ in outs]
    assert bw[0] == bw[1]


@pytest.mark.parametrize("fault", ["crash", "hang"])
def test_a_dying_or_hanging_rank_fails_within_the_bound(fault, marker, run_dirs):
    timeout = 25
    start = time.monotonic()
    proc = cli(["selftest", "allreduce", "--nproc", "2", "--backend", "gloo", "--json", "--timeout", str(timeout), *SMALL],
               env={"ENVDOCTOR_TEST_MARK": marker, "ENVDOCTOR_SELFTEST_FAULT": f"{fault}:1:20"})
    elapsed = time.monotonic() - start
    assert proc.returncode == 1, proc.stderr
    t = by_name(doc(proc), "allreduce")
    assert t["status"] == "failed"
    assert t["seconds"] <= timeout + 5 + 1  # the documented bound: --timeout + TERM_GRACE (+ ~1 s)
    assert elapsed < timeout + 5 + 15  # the whole command, startup included
    if fault == "crash":
        # rank 1 was SIGKILLed: it wrote no result, and the launcher's summary names it
        assert "1 of 2 local rank(s) ended without a result" in t["error"]
        assert "rank 1 exited -9 (SIGKILL)" in t["error"]
    else:
        # rank 0's collective times out (process-group timeout 0.4 x --timeout) well before the deadline
        assert "rank 0:" in t["error"]
        assert t["seconds"] < timeout
    log = Path(t["log"])
    assert "envdoctor fault injection: rank 1 " + fault in log.read_text()  # the failed run's log is kept
    assert log.parent.parent == run_dirs
    # the marker fixture asserts that no process of the run is left
