"""`selftest collectives`: real gloo ranks (marked slow), the exact check, nccl-tests' busbw per collective, the
bound on a failing rank, and the NCCL diagnosis with a stand-in launcher."""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Dict, List, Optional

import pytest

from envdoctor.selftest import collectives, registry
from envdoctor.selftest.collectives import (
    COLLECTIVES,
    CollectivesOptions,
    algbw_gbps,
    busbw_factor,
    busbw_gbps,
    plots,
    run_collectives,
    summary,
)
from envdoctor.selftest.common import Target
from envdoctor.selftest.kind import SizePlot
from envdoctor.selftest.launch import LaunchResult
from envdoctor.selftest.result import WORKERS, TestResult

from .conftest import by_name, cli, doc, free_port, popen_cli
from .test_selftest_nccl_paths import NCCL_LOG, pcie_pair

SMALL = ["--max-size", "16K", "--iters", "3"]  # 5 sizes x 6 collectives: a test run, not a benchmark
SIZES_SMALL = [str(1024 << i) for i in range(5)]


def worker_module():
    """The worker as the target runs it (it imports torch: the unit tests of its checker need torch here)."""
    pytest.importorskip("torch")
    spec = importlib.util.spec_from_file_location("collectives_worker", WORKERS / "collectives_worker.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# --- nccl-tests' formulas ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [2, 3, 4, 8])
def test_busbw_factor_per_collective_is_nccl_tests(n):
    assert busbw_factor("all_reduce", n) == pytest.approx(2 * (n - 1) / n)
    for name in ("all_gather", "reduce_scatter", "alltoall"):
        assert busbw_factor(name, n) == pytest.approx((n - 1) / n)
    assert busbw_factor("broadcast", n) == busbw_factor("sendrecv", n) == 1.0
    # 64 MiB in 10 ms: algbw 6.71 GB/s, busbw by the factor
    assert algbw_gbps(64 << 20, 0.01) == pytest.approx(6.7108864)
    assert busbw_gbps("all_reduce", 64 << 20, 0.01, n) == pytest.approx(6.7108864 * 2 * (n - 1) / n)
    assert busbw_gbps("alltoall", 64 << 20, 0.01, n) == pytest.approx(6.7108864 * (n - 1) / n)


def test_the_worker_uses_the_same_factors_and_the_same_collectives():
    w = worker_module()
    assert tuple(w.COLLECTIVES) == COLLECTIVES
    for name in COLLECTIVES:
        for n in (1, 2, 3, 8):
            if n == 1 and name in ("all_reduce", "all_gather", "reduce_scatter", "alltoall"):
                assert w.BUSBW_FACTOR[name](n) == busbw_factor(name, n) == 0.0
            else:
                assert w.BUSBW_FACTOR[name](n) == pytest.approx(busbw_factor(name, n))


# --- the exact check -----------------------------------------------------------------------------------------------

def _simulate(torch, w, name: str, world: int, count: int) -> List:
    """What each rank's result is, from every rank's inputs by the collective's definition (no process group)."""
    ins = [w.inputs(torch, name, r, world, count, torch.device("cpu")) for r in range(world)]
    c = count // world
    if name == "all_reduce":
        return [sum(ins) for _ in range(world)]
    if name == "all_gather":
        return [torch.cat(ins) for _ in range(world)]
    if name == "reduce_scatter":
        total = sum(ins)
        return [total[r * c:(r + 1) * c] for r in range(world)]
    if name == "alltoall":
        return [torch.cat([ins[s][r * c:(r + 1) * c] for s in range(world)]) for r in range(world)]
    if name == "broadcast":
        return [ins[0] for _ in range(world)]
    return [ins[(r - 1) % world] for r in range(world)]  # sendrecv: from the previous rank


@pytest.mark.parametrize("name", COLLECTIVES)
@pytest.mark.parametrize("world", [2, 3, 5])
def test_the_expected_result_is_every_element_the_collective_defines(name, world):
    import torch

    w = worker_module()
    count = w.element_count(name, 4096, world)
    assert count * 4 <= 4096 + 4 * world and (name not in w.CHUNKED or count % world == 0)
    results = _simulate(torch, w, name, world, count)
    for rank in range(world):
        want = w.expected(torch, name, rank, world, count, torch.device("cpu"))
        assert w.compare(torch, results[rank], want) is None
        assert bool((want == want.round()).all()) and float(want.abs().max()) < 2 ** 24  # exact integers
    # rank-dependent: a result from the wrong rank (or the wrong chunk) is not the expected one
    if world > 1 and name in ("reduce_scatter", "alltoall", "sendrecv"):
        assert w.compare(torch, results[1], w.expected(torch, name, 0, world, count, torch.device("cpu"))) is not None


def test_one_wrong_element_is_found_with_its_index_and_values():
    import torch

    w = worker_module()
    want = w.expected(torch, "alltoall", 0, 2, 1024, torch.device("cpu"))
    got = want.clone()
    got[700] += 1.0
    first, value, expected, wrong = w.compare(torch, got, want)
    assert (first, wrong) == (700, 1) and value == expected + 1.0
    assert "element 700 is" in w.wrong_text("alltoall", 4096, (first, value, expected, wrong))
    assert w.compare(torch, got[:10], want)[0] == -1  # a wrong shape is wrong too
    with pytest.raises(ValueError):
        w.parse_corrupt("nonesuch:0:1")


def test_sums_stay_exact_in_float32_over_256_ranks():
    import torch

    w = worker_module()
    idx = torch.arange(w.PERIOD, dtype=torch.int64)
    total = sum(w.pattern(torch, r, idx).double() for r in range(256))
    assert float(total.max()) < 2 ** 24
    assert torch.equal(w.rank_sum(torch, 256, idx).double(), total)


# --- the record: summary, plot, registry ---------------------------------------------------------------------------

def _metrics(world: int = 2) -> Dict:
    sizes = {"1024": 0.5, str(64 << 20): 2.0}
    colls = {n: {"busbw_gbps": {s: v * (i + 1) for s, v in sizes.items()},
                 "algbw_gbps": {s: v for s, v in sizes.items()}, "iters": {s: 5 for s in sizes},
                 "bytes": {s: int(s) for s in sizes}, "busbw_factor": 1.0, "correct": True}
             for i, n in enumerate(("all_reduce", "alltoall"))}
    return {"world_size": world, "backend": "gloo", "collectives": colls, "largest_size": 64 << 20,
            "busbw_at_largest_gbps": {n: c["busbw_gbps"][str(64 << 20)] for n, c in colls.items()}}


def test_summary_and_the_plot_of_the_busiest_collective():
    m = _metrics()
    assert summary(m) == "2 ranks, gloo, at 64 MiB: busbw all_reduce 2.00, alltoall 4.00 GB/s"
    (plot,) = plots(TestResult("collectives", "passed", 1.0, m))
    assert isinstance(plot, SizePlot) and plot.points == {1024: 1.0, 64 << 20: 4.0}
    assert plot.what == "alltoall busbw [busiest of 2]"
    one = _metrics(world=1)
    assert "algbw all_reduce 2.00" in summary(one) and "no data moves" in summary(one)
    assert plots(TestResult("collectives", "failed", 1.0, {})) == ()


def test_all_includes_collectives_wherever_torch_is():
    t = Target(python="/fake/python", torch="2.13.0", gloo=True)
    assert "collectives" in registry.select(["all"], t)
    assert registry.select(["all"], t).index("collectives") == registry.select(["all"], t).index("allreduce") + 1
    assert registry.get("collectives") is collectives.KIND and collectives.KIND.timeout == 600.0


# --- real gloo ranks -----------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_two_gloo_ranks_pass_every_collective(marker):
    proc = cli(["selftest", "collectives", "--nproc", "2", "--backend", "gloo", "--json", *SMALL],
               env={"ENVDOCTOR_TEST_MARK": marker})
    assert proc.returncode == 0, proc.stderr
    t = by_name(doc(proc), "collectives")  # doc() validates the envdoctor.selftest/1 schema
    assert t["status"] == "passed" and t["error"] is None and t["findings"] == []
    m = t["metrics"]
    assert m["world_size"] == 2 and m["backend"] == "gloo" and m["correct"] is True and m["ranks_reported"] == [0, 1]
    assert list(m["collectives"]) == list(COLLECTIVES)
    for name, c in m["collectives"].items():
        assert c["correct"] is True
        assert sorted(c["busbw_gbps"], key=int) == SIZES_SMALL
        assert set(c["iters"].values()) == {3}
        assert c["bytes"] == {s: int(s) for s in SIZES_SMALL}  # powers of two: S is exactly the bytes moved
        assert c["busbw_factor"] == busbw_factor(name, 2)
        for s in SIZES_SMALL:  # busbw = algbw x factor (both rounded to 4 places)
            assert c["busbw_gbps"][s] == pytest.approx(c["algbw_gbps"][s] * c["busbw_factor"], abs=1e-4)
            assert c["algbw_gbps"][s] > 0
    assert m["largest_size"] == 16384 and set(m["busbw_at_largest_gbps"]) == set(COLLECTIVES)
    assert "2 ranks joined (gloo)" in proc.stderr
    for name in COLLECTIVES:  # one progress line per collective and size
        assert sum(1 for ln in proc.stderr.splitlines() if ln.split()[2:3] == [name] and " B " in ln) == 5


@pytest.mark.slow
def test_a_wrong_element_fails_the_test_naming_the_collective_rank_and_element(marker, run_dirs):
    proc = cli(["selftest", "collectives", "--nproc", "2", "--backend", "gloo", "--json", "--max-size", "2K",
                "--iters", "2"], env={"ENVDOCTOR_TEST_MARK": marker, "ENVDOCTOR_SELFTEST_CORRUPT": "alltoall:1:300"})
    assert proc.returncode == 1, proc.stderr
    t = by_name(doc(proc), "collectives")
    assert t["status"] == "failed"
    assert ("rank 1: alltoall of 2048 bytes gave a wrong result: element 300 is" in t["error"]
            and "(1 element(s) wrong)" in t["error"])
    assert "1024 bytes" not in t["error"]  # 256 elements: there is no element 300 to corrupt at 1 KiB
    colls = t["metrics"]["collectives"]
    assert colls["alltoall"]["correct"] is False
    assert all(c["correct"] for n, c in colls.items() if n != "alltoall")
    assert Path(t["log"]).parent.parent == run_dirs  # a failed run keeps its log


@pytest.mark.slow
def test_two_nodes_meet_through_c10d_rendezvous_and_agree(marker):
    port = free_port()
    common = ["selftest", "collectives", "--nnodes", "2", "--nproc", "1", "--backend", "gloo", "--json",
              "--rdzv-endpoint", f"127.0.0.1:{port}", "--timeout", "120", "--max-size", "4K", "--iters", "2"]
    nodes = [popen_cli([*common, "--node-rank", str(r)], {"ENVDOCTOR_TEST_MARK": marker}) for r in (0, 1)]
    outs = [n.communicate(timeout=240) for n in nodes]
    tests = []
    for n, (out, err) in zip(nodes, outs):
        assert n.returncode == 0, err
        tests.append(by_name(json.loads(out), "collectives"))
    assert all(t["status"] == "passed" and t["metrics"]["world_size"] == 2 for t in tests)
    assert sorted(t["metrics"]["ranks_reported"][0] for t in tests) == [0, 1]
    # the ranks reduce the timings, so both nodes report the same figures for every collective
    assert tests[0]["metrics"]["collectives"] == tests[1]["metrics"]["collectives"]


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["crash", "hang"])
def test_a_dying_or_hanging_rank_fails_within_the_bound(fault, marker, run_dirs):
    timeout = 25
    start = time.monotonic()
    proc = cli(["selftest", "collectives", "--nproc", "2", "--backend", "gloo", "--json", "--timeout", str(timeout),
                *SMALL], env={"ENVDOCTOR_TEST_MARK": marker, "ENVDOCTOR_SELFTEST_FAULT": f"{fault}:1:20"})
    elapsed = time.monotonic() - start
    assert proc.returncode == 1, proc.stderr
    t = by_name(doc(proc), "collectives")
    assert t["status"] == "failed"
    assert t["seconds"] <= timeout + 5 + 1  # --timeout + TERM_GRACE (+ ~1 s), as allreduce
    assert elapsed < timeout + 5 + 15
    if fault == "crash":
        assert "1 of 2 local rank(s) ended without a result" in t["error"]
        assert "rank 1 exited -9 (SIGKILL)" in t["error"]
    else:
        assert "rank 0:" in t["error"]  # its collective timed out (0.4 x --timeout)
        assert t["seconds"] < timeout
    log = Path(t["log"])
    assert "envdoctor fault injection: rank 1 " + fault in log.read_text()
    assert log.parent.parent == run_dirs
    # the marker fixture asserts that no process of the run is left


# --- NCCL, with a stand-in launcher --------------------------------------------------------------------------------

SIZES = [1 << 20, 16 << 20]


class FakeTorchrun:
    """Stands in for torchrun: collectives ranks that fail unless `works_with` is in their environment."""

    def __init__(self, works_with: Optional[str], busbw: float, world: int = 2) -> None:
        self.works_with, self.busbw, self.world = works_with, busbw, world
        self.calls: List[Dict[str, str]] = []

    def __call__(self, argv, env, timeout, log_path: Path, on_tick=None) -> LaunchResult:
        self.calls.append({k: v for k, v in env.items() if k.startswith(("NCCL_", "TORCH_NCCL"))})
        out = Path(argv[argv.index("--out") + 1])
        assert argv[argv.index("--backend") + 1] == "nccl" and str(WORKERS / "collectives_worker.py") in argv
        names = argv[argv.index("--collectives") + 1].split(",")
        works = self.works_with == "always" or (self.works_with is not None and env.get(self.works_with) == "1")
        sizes = {str(s): {"bytes": s, "iters": 20, "seconds": 1.0, "algbw_gbps": self.busbw,
                          "busbw_gbps": self.busbw, "correct": True} for s in SIZES}
        for rank in range(self.world):
            data = {"rank": rank, "world_size": self.world, "ok": works, "errors": [],
                    "collectives": {n: {"sizes": sizes} for n in names} if works else {}}
            if not works:
                data["errors"] = ["Traceback ...\ntorch.distributed.DistBackendError: NCCL error: unhandled cuda error"]
            (out / f"rank{rank}.json").write_text(json.dumps(data))
        log_path.write_text("" if works else NCCL_LOG)
        return LaunchResult(list(argv), 0 if works else 1, False, 2.0, log_path)


def _target() -> Target:
    return Target(python=sys.executable, torch="2.13.0+cu130", cuda_available=True, device_count=2, nccl=True, gloo=True)


def _opts(**kw) -> CollectivesOptions:
    return replace(CollectivesOptions(nproc=2, backend="nccl", sizes=SIZES, timeout=60), **kw)


def test_a_failed_nccl_run_is_diagnosed_and_its_transport_isolated():
    fake = FakeTorchrun(works_with="NCCL_SHM_DISABLE", busbw=9.0)
    lines: List[str] = []
    res = run_collectives(_target(), _opts(), snapshot=pcie_pair, progress=lines.append, launcher=fake)
    assert res.status == "failed" and "NCCL error: unhandled cuda error" in res.error
    assert [sorted(k for k in c if k.endswith("_DISABLE")) for c in fake.calls] == [
        [], ["NCCL_P2P_DISABLE"], ["NCCL_SHM_DISABLE"], ["NCCL_IB_DISABLE"]]
    assert all(c["NCCL_DEBUG"] == "INFO" for c in fake.calls)
    iso = res.metrics["transport_isolation"]
    assert iso["NCCL_SHM_DISABLE"] == {"status": "passed", "busbw_gbps": {str(s): 9.0 for s in SIZES}, "error": None}
    f = res.findings[0]
    assert f.id == "SELFTEST-NCCL-TRANSPORT" and f.category == "nccl_transport_failure"
    assert "collective traffic fails through the SHM (shared memory) transport" in f.title
    assert "38% of the ~24 GB/s" in f.detail
    assert any(x.id.startswith("NCCL-") for x in res.findings[1:])  # the NCCL log diagnosis
    assert "collectives failed; retrying with NCCL_IB_DISABLE=1" in lines
    assert res.seconds == 8.0 and res.log and "NCCL WARN" in Path(res.log).read_text()


def test_a_passing_nccl_run_is_judged_per_collective_against_the_links():
    slow = run_collectives(_target(), _opts(collectives=("all_gather", "sendrecv")), snapshot=pcie_pair,
                           launcher=FakeTorchrun("always", busbw=5.0))
    assert slow.status == "passed"
    assert [f.id for f in slow.findings] == ["SELFTEST-COLLECTIVE-SLOW"] * 2
    assert [f.title.split()[0] for f in slow.findings] == ["all_gather", "sendrecv"]
    assert slow.metrics["expected_busbw_gbps"] == 23.6
    fast = run_collectives(_target(), _opts(), snapshot=pcie_pair, launcher=FakeTorchrun("always", busbw=20.0))
    assert fast.status == "passed" and fast.findings == []
    assert fast.metrics["expected_path"].startswith("PCIe gen4 x16")


def test_isolation_is_not_attempted_across_nodes():
    fake = FakeTorchrun(works_with=None, busbw=1.0)
    res = run_collectives(_target(), _opts(nnodes=2, rdzv_endpoint="127.0.0.1:29500"), snapshot=lambda: None,
                          launcher=fake)
    assert res.status == "failed" and len(fake.calls) == 1 and "transport_isolation" not in res.metrics


# --- the TUI, from the record alone --------------------------------------------------------------------------------

@pytest.mark.slow
def test_the_tui_gives_collectives_its_button_row_gist_and_the_busiest_plot(monkeypatch):
    """No TUI code names the test: its button, Run all's row, its gist and its plot come from the record."""
    import asyncio

    from textual.widgets import DataTable, Static

    from envdoctor.selftest import common, runner
    from envdoctor.tui import messages as msg
    from envdoctor.tui.app import make_app
    from tests.tui.conftest import recorded, settle, text_of, until

    canned = TestResult("collectives", "passed", 3.0, _metrics())
    monkeypatch.setattr(runner, "run_test", lambda name, *a, **k: canned if name == "collectives"
                        else TestResult(name, "skipped", 0.1, error="not in this test"))
    monkeypatch.setattr(common, "probe_target", lambda python, *a, **k: Target(python=python, torch="2.13.0", gloo=True))

    async def drive():
        seen: list = []
        app = make_app(recorded("cpu_only_this_machine"), fix_python=sys.executable)
        async with app.run_test(size=(120, 40), message_hook=seen.append) as pilot:
            await settle(pilot, app)
            await pilot.press("s")
            await settle(pilot, app)
            await pilot.click("#run-collectives")
            await until(pilot, lambda: any(isinstance(m, msg.SelftestsFinished) for m in seen))
            await settle(pilot, app)
            row = app.query_one("#selftest-table", DataTable).get_row("collectives")
            assert [str(c) for c in row] == ["collectives", "passed", "3.0", summary(_metrics())]
            chart = text_of(app.query_one("#busbw-chart", Static))
            assert "alltoall busbw [busiest of 2] (GB/s) by message size" in chart
            detail = text_of(app.query_one("#selftest-detail-text", Static))
            assert "collectives: passed" in detail and "collectives all reduce bus bandwidth at 1 KiB" in detail
            seen.clear()
            await pilot.click("#run-all")
            await until(pilot, lambda: any(isinstance(m, msg.SelftestsFinished) for m in seen))
            await settle(pilot, app)
            table = app.query_one("#selftest-table", DataTable)
            assert {"allreduce", "collectives", "backward"} <= {str(k.value) for k in table.rows}  # Run all ran it
            assert str(table.get_row("collectives")[1]) == "passed"
            assert any(isinstance(m, msg.SelftestsSelected) and m.names[:2] == ["allreduce", "collectives"] for m in seen)

    asyncio.run(drive())
