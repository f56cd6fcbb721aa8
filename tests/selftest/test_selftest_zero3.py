"""`selftest zero3`: DeepSpeed ZeRO-3 with cpu offload for real on this CPU machine (DS_ACCELERATOR=cpu, one rank
through torchrun), its broken environments (no ninja, no compiler: PATH without them), and the failure causes
read from real DeepSpeed output (tests/fixtures/zero3/)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from envdoctor.errors import InputError
from envdoctor.selftest.common import Target
from envdoctor.selftest.runner import SelftestOptions, names_for_all
from envdoctor.selftest.zero3 import local_disk, nvme_findings, run_env, run_zero3, zero3_metrics
from envdoctor.selftest.zero3_causes import CAUSES, cause_finding, classify, first_compiler_error

from .conftest import ROOT, by_name, cli, doc, marked, popen_cli

FIXTURES = ROOT / "tests" / "fixtures" / "zero3"
LIBAIO_HEADERS = Path("/usr/include/libaio.h").exists()


def _deepspeed_installed() -> bool:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return bool(version("deepspeed"))
    except PackageNotFoundError:
        return False


needs_deepspeed = pytest.mark.skipif(not _deepspeed_installed(), reason="DeepSpeed is not installed here")


@pytest.fixture(scope="module")
def extensions(tmp_path_factory) -> Path:
    """One TORCH_EXTENSIONS_DIR for this module: empty at first, so the first run's op build is a real cold build."""
    return tmp_path_factory.mktemp("torch_extensions")


def toolless_path(tmp_path: Path, drop: set) -> str:
    """A PATH of one directory: symlinks to every program on this PATH except those named in `drop`."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for d in os.environ.get("PATH", "").split(os.pathsep):
        try:
            names = os.listdir(d)
        except OSError:
            continue
        for name in names:
            if name in drop or any(name.startswith(p) for p in drop if p.endswith("-")) or (bin_dir / name).exists():
                continue
            src = Path(d) / name
            if src.is_file() and os.access(src, os.X_OK):
                (bin_dir / name).symlink_to(src)
    return str(bin_dir)


COMPILERS = {"gcc", "g++", "c++", "cc", "cpp", "clang", "clang++", "c89-gcc", "c99-gcc", "x86_64-linux-gnu-",
             "aarch64-linux-gnu-", "gcc-", "g++-", "clang-"}


# --- real runs ---------------------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.cold_build
@needs_deepspeed
def test_cold_build_then_warm_run_match_torch_adam(extensions, marker, run_dirs):
    """The suite's one cold build of cpu_adam, and with libaio of pin_memory and async_io for the NVMe run that
    follows on its own (minutes each on 2 cores, many more on a loaded machine), then the same run warm."""
    env = {"ENVDOCTOR_TEST_MARK": marker, "TORCH_EXTENSIONS_DIR": str(extensions)}
    cold = cli(["selftest", "zero3", "--timeout", "3000", "--json"], env=env, timeout=3100)
    assert cold.returncode == 0, cold.stdout + cold.stderr
    t = by_name(doc(cold), "zero3")
    m = t["metrics"]
    assert t["status"] == "passed" and t["error"] is None
    assert m["accelerator"] == "cpu" and m["device"] == "cpu" and m["steps"] == 4
    assert 1_000_000 < m["parameters"] < 10_000_000  # the backward test's model
    ops = {o["name"]: o for o in m["ops"]}
    assert ops["cpu_adam"]["cache"] == "cold" and ops["cpu_adam"]["seconds"] > 0
    assert ops["cpu_adam"]["extensions_dir"] == str(extensions)
    assert list((extensions / "cpu_adam").glob("*.so"))
    nvme_auto = LIBAIO_HEADERS and local_disk(run_dirs) is not None
    assert set(m["step_seconds"]) == {"reference", "zero3", "offload_cpu"} | ({"offload_nvme"} if nvme_auto else set())
    assert all(v > 0 for v in m["step_seconds"].values())
    assert m["runs"]["offload_cpu"]["optimizer"] == "DeepSpeedCPUAdam"  # the op ran, not a torch fallback
    assert m["tolerance"] == {"loss": 1e-4, "update": 2e-2}
    for run in ("zero3", "offload_cpu", "offload_nvme") if nvme_auto else ("zero3", "offload_cpu"):
        r = m["runs"][run]
        assert r["matches"] and r["max_rel_loss_diff"] <= 1e-4 and r["rel_update_diff"] <= 2e-2
        assert len(r["losses"]) == 4 and r["losses"][0] == pytest.approx(m["runs"]["reference"]["losses"][0], rel=1e-6)
    assert m["max_rel_loss_diff"] == m["runs"]["offload_cpu"]["max_rel_loss_diff"]
    fit = m["fit"]
    assert fit["estimator"].endswith("estimate_zero3_model_states_mem_needs")
    assert fit["gpu_bytes"] is None and fit["limited_by"] == "host memory"
    assert 0 < fit["cpu_bytes"] <= fit["host_available_bytes"]
    # 18 bytes per parameter x 1.5 (DeepSpeed's model with both offloads): the answer is host memory / 27
    assert fit["max_params"] == pytest.approx(fit["host_available_bytes"] / 27, rel=0.01)
    if not LIBAIO_HEADERS and local_disk(run_dirs):  # NVMe was not tried, and the verdict says why and what fixes it
        assert m["nvme"]["status"] == "skipped" and "libaio" in m["nvme"]["reason"]
        f = next(f for f in t["findings"] if f["id"] == "SELFTEST-ZERO3-LIBAIO-MISSING")
        assert f["severity"] == "info" and "ED308" in f["references"] and "libaio-dev" in f["fix"]
    if nvme_auto:  # libaio and a local disk: the NVMe run went ahead on its own, in the run directory
        assert m["nvme"]["status"] == "passed" and not m["nvme"]["requested"]
        assert ops["async_io"]["cache"] == "cold" and list((extensions / "async_io").glob("*.so"))
    assert "cpu_adam: building" in cold.stderr

    warm = cli(["selftest", "zero3", "--json", "--steps", "2"], env=env, timeout=600)
    assert warm.returncode == 0, warm.stdout + warm.stderr
    w = by_name(doc(warm), "zero3")["metrics"]
    assert {o["name"]: o["cache"] for o in w["ops"]}["cpu_adam"] == "warm" and w["steps"] == 2
    assert w["rel_update_diff"] <= 2e-2


@pytest.mark.slow
@pytest.mark.cold_build
@needs_deepspeed
@pytest.mark.skipif(not LIBAIO_HEADERS, reason="libaio headers are not installed (apt-get install libaio-dev)")
def test_nvme_offload_matches_torch_adam_and_measures_the_swap_files(tmp_path, marker):
    """ZeRO-3 with offload_param and offload_optimizer on NVMe swap files (async_io, libaio), for real. The ops
    come from the user's build cache (torch's default TORCH_EXTENSIONS_DIR), as on a second run; the first time,
    cpu_adam, pin_memory and async_io are built there (minutes)."""
    swap = tmp_path / "swap"
    swap.mkdir()
    if local_disk(swap) is None:
        pytest.skip(f"{tmp_path} is not on a local disk")
    proc = cli(["selftest", "zero3", "--nvme", str(swap), "--steps", "3", "--timeout", "3000", "--json"],
               env={"ENVDOCTOR_TEST_MARK": marker}, timeout=3100)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    t = by_name(doc(proc), "zero3")
    m = t["metrics"]
    assert t["status"] == "passed" and set(m["step_seconds"]) == {"reference", "zero3", "offload_cpu", "offload_nvme"}
    r = m["runs"]["offload_nvme"]
    assert r["matches"] and r["max_rel_loss_diff"] <= 1e-4 and r["rel_update_diff"] <= 2e-2 and len(r["losses"]) == 3
    assert r["optimizer"] == "DeepSpeedCPUAdam"
    assert m["max_rel_loss_diff"] >= r["max_rel_loss_diff"]
    nvme = m["nvme"]
    assert nvme["status"] == "passed" and nvme["requested"] and nvme["directory"] == str(swap)
    assert nvme["libaio_header"].endswith("libaio.h")
    # the swap files held the parameters and optimizer states: at least fp32 params + Adam's two moments
    assert nvme["swap_bytes"] >= 3 * 4 * m["parameters"]
    assert 1 << 24 <= nvme["bytes"] <= 1 << 28 and nvme["write_gbps"] > 0 and nvme["read_gbps"] > 0
    assert {o["name"] for o in m["ops"]} >= {"cpu_adam", "pin_memory", "async_io"}
    assert list(swap.iterdir()) == []  # the swap files are removed
    assert "offload to NVMe" in proc.stderr and "swap files write" in proc.stderr


def hide_libaio_header(argv: list) -> list:
    """argv run in a mount namespace of its own where /usr/include/libaio.h is /dev/null (not a file): a machine
    without libaio's headers, for this process tree only. Needs root (unshare -m)."""
    script = "mount --bind /dev/null /usr/include/libaio.h && exec \"$@\""
    return ["unshare", "-m", "sh", "-c", script, "sh", *argv]


def _can_hide_libaio() -> bool:
    if not shutil.which("unshare"):
        return False
    probe = subprocess.run(hide_libaio_header(["test", "!", "-f", "/usr/include/libaio.h"]), capture_output=True)
    return probe.returncode == 0


@pytest.mark.slow
@needs_deepspeed
def test_nvme_asked_for_without_libaio_fails_at_once_naming_ED308(tmp_path, extensions, marker):
    """Without libaio's headers: this machine as it is, or with libaio.h hidden in a mount namespace."""
    argv = [sys.executable, "-m", "envdoctor", "selftest", "zero3", "--nvme", str(tmp_path), "--json"]
    if LIBAIO_HEADERS:
        if not _can_hide_libaio():
            pytest.skip("libaio headers are installed and cannot be hidden here (unshare -m needs root)")
        argv = hide_libaio_header(argv)
    env = dict(os.environ, PYTHONPATH=str(ROOT), ENVDOCTOR_TEST_MARK=marker, TORCH_EXTENSIONS_DIR=str(extensions))
    proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    t = by_name(doc(proc), "zero3")
    assert t["status"] == "failed" and t["metrics"]["cause"] == "libaio_missing"
    assert t["error"].startswith("libaio headers are missing")
    assert "NVMe offload (--nvme" in t["error"] and "libaio.h" in t["error"]
    f = t["findings"][-1]
    assert f["id"] == "SELFTEST-ZERO3-LIBAIO-MISSING" and f["severity"] == "error" and "ED308" in f["references"]
    assert "runs" not in t["metrics"]  # it failed before spending minutes on the other runs
    assert t["log"] and Path(t["log"]).exists()


@pytest.mark.slow
@needs_deepspeed
@pytest.mark.parametrize("drop, cxx, cause, rule", [
    ({"ninja"}, None, "no_ninja", "ED307"),
    (COMPILERS, None, "no_compiler", "ED311"),
    (set(), "@TMP@/no-such-c++", "no_compiler", "ED311"),  # CXX names a compiler that is not there
])
def test_broken_toolchain_names_the_cause_and_its_rule(tmp_path, marker, drop, cxx, cause, rule):
    """A real broken environment: PATH without ninja, or without any C/C++ compiler, or CXX naming none; no build
    cache, so the first op (deepspeed_shm_comm on the CPU accelerator, else cpu_adam) must build."""
    path = toolless_path(tmp_path, drop)
    assert not any(shutil.which(t, path=path) for t in ("ninja",) if "ninja" in drop)
    assert not any(shutil.which(t, path=path) for t in ("gcc", "g++", "c++", "cc") if "gcc" in drop)
    env = {"ENVDOCTOR_TEST_MARK": marker, "PATH": path, "TORCH_EXTENSIONS_DIR": str(tmp_path / "ext")}
    cxx = cxx.replace("@TMP@", str(tmp_path)) if cxx else cxx  # a path no other test or tool can have created
    if cxx:
        env["CXX"] = cxx
    proc = cli(["selftest", "zero3", "--json"], env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    t = by_name(doc(proc), "zero3")
    assert t["status"] == "failed" and t["metrics"]["cause"] == cause
    f = t["findings"][-1]
    assert f["id"] == f"SELFTEST-ZERO3-{cause.upper().replace('_', '-')}" and f["references"][0] == rule
    assert f"envdoctor rules explain {rule}" in f["fix"]
    assert t["error"].splitlines()[0] == f["title"]
    assert "Traceback" not in proc.stderr
    if cause == "no_compiler":
        assert f["title"].startswith(f"no C++ compiler ({cxx or 'c++'} not found)")


@pytest.mark.slow
@needs_deepspeed
def test_failed_op_build_quotes_the_real_compilers_first_error(tmp_path, marker):
    """A compiler that fails: c++ on PATH is the real one made to include a header that stops with #error."""
    broken = tmp_path / "broken.h"
    broken.write_text('#error "envdoctor test: this toolchain is broken"\n')
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    real = shutil.which("c++")
    assert real, "this test needs a C++ compiler to break"
    wrapper = bin_dir / "c++"
    wrapper.write_text(f'#!/bin/sh\nexec {real} -Wfatal-errors -include {broken} "$@"\n')
    wrapper.chmod(0o755)
    env = {"ENVDOCTOR_TEST_MARK": marker, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "CXX": "c++",
           "TORCH_EXTENSIONS_DIR": str(tmp_path / "ext")}
    proc = cli(["selftest", "zero3", "--json"], env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    t = by_name(doc(proc), "zero3")
    m = t["metrics"]
    assert t["status"] == "failed" and m["cause"] == "op_build_failed"
    assert m["first_compiler_error"] == f'{broken}:1:2: error: #error "envdoctor test: this toolchain is broken"'
    f = t["findings"][-1]
    assert f["id"] == "SELFTEST-ZERO3-OP-BUILD-FAILED" and f["title"] == t["error"].splitlines()[0]
    op = "deepspeed_shm_comm" if m.get("accelerator", "cpu") == "cpu" else "cpu_adam"
    assert f["title"] == f"op {op} failed to build: {m['first_compiler_error']}"
    assert "ds_report" in f["fix"] and t["log"] and Path(t["log"]).exists()


def _names(procs) -> set:
    """The names of the processes still there: a compiler may end between the listing and the reading."""
    out = set()
    for p in procs:
        try:
            out.add(p.name())
        except psutil.Error:
            pass
    return out


@pytest.mark.slow
@needs_deepspeed
@pytest.mark.parametrize("how", ["kill", "terminate"])
def test_killing_envdoctor_during_an_op_build_leaves_no_process(tmp_path, marker, how):
    """envdoctor killed (SIGKILL) or stopped (SIGTERM) while ninja and the compiler build an op: every process
    the run started (torchrun, the rank, ninja, the compilers) ends. (After SIGKILL the build lock stays; the
    next run says so while it waits.)"""
    env = {"ENVDOCTOR_TEST_MARK": marker, "TORCH_EXTENSIONS_DIR": str(tmp_path / "ext")}
    proc = popen_cli(["selftest", "zero3", "--json"], env)
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and proc.poll() is None:
            names = _names(p for p in marked(marker) if p.pid != proc.pid)
            if "ninja" in names and names & {"cc1plus", "c++", "g++"}:
                break
            time.sleep(0.2)
        tree = [p for p in marked(marker) if p.pid != proc.pid]
        assert {"ninja"} <= _names(tree), "an op should be building by now"
        proc.kill() if how == "kill" else proc.terminate()
        proc.communicate(timeout=60)
        _gone, alive = psutil.wait_procs(tree, timeout=30)
        assert alive == []
        assert marked(marker) == []
        if how == "terminate":  # envdoctor outlived its run: it removed the build lock torch would wait on forever
            assert list((tmp_path / "ext").glob("*/build.ninja")) and not list((tmp_path / "ext").glob("*/lock"))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


@pytest.mark.slow
@needs_deepspeed
def test_deadline_kills_the_run_and_leaves_nothing(tmp_path, marker):
    proc = cli(["selftest", "zero3", "--timeout", "4", "--json"],
               env={"ENVDOCTOR_TEST_MARK": marker, "TORCH_EXTENSIONS_DIR": str(tmp_path / "ext")})
    assert proc.returncode == 1
    t = by_name(doc(proc), "zero3")
    assert t["status"] == "failed" and "timed out after" in t["error"]
    # the marker fixture fails the test if any process of the run is still alive


def test_envdoctor_never_imports_torch_or_deepspeed_for_zero3():
    code = ("import sys, envdoctor.selftest.zero3, envdoctor.selftest.zero3_causes; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'deepspeed')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --- the orchestration, at the subprocess boundary -----------------------------------------------------------------

def test_all_runs_zero3_only_where_deepspeed_is_installed():
    with_ds = Target("/py", torch="2.13.0", raw={"deepspeed": "0.19.8"})
    without = Target("/py", torch="2.13.0", raw={"deepspeed": None})
    assert names_for_all(with_ds) == ["allreduce", "collectives", "backward", "compile", "gpu", "zero3"]
    assert names_for_all(without) == ["allreduce", "collectives", "backward", "compile", "gpu"]
    r = run_zero3(without)
    assert r.status == "skipped" and "DeepSpeed is not installed" in r.error


def test_cpu_accelerator_without_cuda_and_cuda_left_alone(monkeypatch):
    monkeypatch.delenv("DS_ACCELERATOR", raising=False)
    assert run_env(Target("/py", torch="2.13.0"))["DS_ACCELERATOR"] == "cpu"
    assert "DS_ACCELERATOR" not in run_env(Target("/py", torch="2.13.0", cuda_available=True, device_count=1))
    monkeypatch.setenv("DS_ACCELERATOR", "xpu")  # the user's choice stands
    assert run_env(Target("/py", torch="2.13.0"))["DS_ACCELERATOR"] == "xpu"


def test_nvme_option_must_be_a_writable_directory(tmp_path):
    SelftestOptions(nvme=tmp_path).check()
    with pytest.raises(InputError, match="--nvme .*not a writable directory"):
        SelftestOptions(nvme=tmp_path / "missing").check()
    with pytest.raises(InputError, match="--steps"):
        SelftestOptions(steps=1).check()


def test_bad_nvme_path_is_exit_2_with_one_line(tmp_path):
    proc = cli(["selftest", "zero3", "--nvme", str(tmp_path / "nope")])
    assert proc.returncode == 2 and proc.stderr.strip().count("\n") == 0 and "--nvme" in proc.stderr


def test_memory_file_systems_are_not_a_local_disk(tmp_path):
    if Path("/dev/shm").is_dir():
        assert local_disk(Path("/dev/shm")) is None  # tmpfs: swapping there measures RAM
    assert local_disk(tmp_path / "missing") is None  # not writable: nothing to swap into


def test_metrics_take_the_worst_offloaded_run():
    data = {"accelerator": "cpu", "ops": [{"name": "cpu_adam", "cache": "warm", "seconds": 2.0}],
            "tolerance": {"loss": 1e-4, "update": 2e-2},
            "runs": {"reference": {"step_seconds": 0.05, "losses": [1.0]},
                     "zero3": {"step_seconds": 0.2, "max_rel_loss_diff": 9.0, "rel_update_diff": 9.0},
                     "offload_cpu": {"step_seconds": 0.15, "max_rel_loss_diff": 1e-6, "rel_update_diff": 3e-3},
                     "offload_nvme": {"step_seconds": 0.9, "max_rel_loss_diff": 2e-6, "rel_update_diff": 1e-3}}}
    m = zero3_metrics(data)
    assert m["step_seconds"] == {"reference": 0.05, "zero3": 0.2, "offload_cpu": 0.15, "offload_nvme": 0.9}
    assert m["max_rel_loss_diff"] == 2e-6 and m["rel_update_diff"] == 3e-3  # zero3 (no offload) is not an offload run
    assert nvme_findings({"nvme": {"status": "skipped", "reason": "no writable local disk"}}) == []


# --- causes, from real DeepSpeed output ----------------------------------------------------------------------------

def _fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("name, cause", [
    ("no_ninja.txt", "no_ninja"),            # captured: PATH without ninja
    ("no_compiler.txt", "no_compiler"),      # captured: PATH without c++
    ("cxx_nonexistent.txt", "no_compiler"),  # captured: CXX=/nonexistent
    ("nvcc_mismatch.txt", "nvcc_mismatch"),  # captured: DeepSpeed's assert_no_cuda_mismatch, nvcc 13.0 vs torch 12.8
    ("libaio_missing.txt", "libaio_missing"),  # captured: AsyncIOBuilder.is_compatible(verbose=True)
    ("pinned_oom.txt", "pinned_memory"),     # composed from DeepSpeed's pinning frame and torch's CUDA OOM message
])
def test_classify_real_deepspeed_text(name, cause):
    found = classify(_fixture(name))
    assert found is not None and found[0] == cause


def test_no_compiler_names_the_missing_program():
    assert classify(_fixture("no_compiler.txt")) == ("no_compiler", {"compiler": "c++"})
    assert classify(_fixture("cxx_nonexistent.txt")) == ("no_compiler", {"compiler": "/nonexistent"})
    # a program missing outside an op build is not a compiler
    assert classify("/bin/sh: 1: nvidia-smi: not found\n") is None


def test_nvcc_mismatch_quotes_both_versions_and_fills_the_rule_fix():
    key, values = classify(_fixture("nvcc_mismatch.txt"))
    assert values == {"nvcc": "13.0", "cuda": "12.8"}
    f = cause_finding(key, values, "d")
    assert f.title == "nvcc 13.0 does not match torch's CUDA 12.8: DeepSpeed refuses to build its ops"
    assert "torch's CUDA 12.8" in f.fix and "ED304" in f.fix and f.references[0] == "ED304"
    assert "{" not in f.fix


def test_failed_op_build_quotes_the_compilers_first_error():
    log = ("[1/3] c++ -MMD -c cpu_adam.cpp -o cpu_adam.o\nFAILED: cpu_adam.o\n"
           "In file included from /x/csrc/includes/cpu_adam.h:12,\n"
           "/x/csrc/includes/simd.h:9:10: fatal error: immintrin.h: No such file or directory\n"
           "/x/csrc/adam/cpu_adam.cpp:40:3: error: 'foo' was not declared in this scope\n"
           "ninja: build stopped: subcommand failed.\n")
    err = "RuntimeError: Error building extension 'cpu_adam'"
    key, values = classify(err, log)
    assert key == "op_build_failed" and values["op"] == "cpu_adam"
    assert values["first_error"] == "/x/csrc/includes/simd.h:9:10: fatal error: immintrin.h: No such file or directory"
    f = cause_finding(key, values, err)
    assert f.title.startswith("op cpu_adam failed to build: /x/csrc/includes/simd.h:9:10: fatal error") and not f.references
    key, _ = classify(err, "/usr/include/x.h:1:10: fatal error: Python.h: No such file or directory\n")
    assert key == "python_headers_missing" and cause_finding(key, {"op": "cpu_adam"}, "").references[0] == "ED311"


def test_full_dev_shm_links_the_shm_rule_with_its_unknowns_marked():
    key, values = classify("OSError: [Errno 28] No space left on device: '/dev/shm/deepspeed_shm_0'")
    f = cause_finding(key, values, "d")
    assert key == "shm_exhausted" and f.references[0] == "ED201"
    assert "<needed_mib>" in f.fix and "{" not in f.fix  # what this run cannot know is shown, not invented


def test_text_that_names_no_cause_stays_unclassified():
    assert classify("RuntimeError: losses differ", "some log\n") is None
    assert first_compiler_error("no errors here") is None
    # DeepSpeed accepting a minor mismatch is not a failure
    assert classify("Installed CUDA version 12.4 does not match the version torch was compiled with 12.1 but since "
                    "the APIs are compatible, accepting this combination") is None


def test_every_cause_links_a_rule_that_exists_or_carries_its_own_fix():
    from envdoctor.rules.registry import load_rules

    ids = {r.id for r in load_rules()}
    for cause in CAUSES.values():
        assert (cause.rule in ids) if cause.rule else cause.fix, cause.key


@pytest.mark.slow
def test_the_tui_self_tests_tab_runs_zero3(tmp_path):
    import venv

    from textual.widgets import DataTable

    from envdoctor.tui import messages as msg
    from envdoctor.tui.app import make_app
    from tests.tui.conftest import aio, recorded, settle, until

    bare = tmp_path / "bare"  # an interpreter without torch: the test fails fast, with the reason in the table
    venv.create(bare, with_pip=False)

    @aio
    async def drive():
        seen = []
        app = make_app(recorded("cpu_only_this_machine"), fix_python=str(bare / "bin" / "python"))
        async with app.run_test(size=(120, 40), message_hook=seen.append) as pilot:
            await settle(pilot, app)
            await pilot.press("s")
            await settle(pilot, app)
            assert app.active_tab == "selftest"
            await pilot.click("#run-zero3")
            await until(pilot, lambda: any(isinstance(m, msg.SelftestsFinished) for m in seen), timeout=120)
            await settle(pilot, app)
            assert next(m for m in seen if isinstance(m, msg.SelftestRequested)).names == ["zero3"]
            row = app.query_one("#selftest-table", DataTable).get_row("zero3")
            assert str(row[1]) == "failed" and "torch does not import" in str(row[3])

    drive()


def test_schema_requires_what_a_passed_zero3_reports():
    from envdoctor.selftest.result import TestResult, document
    from tests.json_schemas import errors

    metrics = {"accelerator": "cpu", "step_seconds": {"reference": 0.05, "zero3": 0.2, "offload_cpu": 0.15},
               "max_rel_loss_diff": 2e-6, "rel_update_diff": 3e-3, "tolerance": {"loss": 1e-4, "update": 2e-2},
               "ops": [{"name": "cpu_adam", "cache": "warm", "seconds": 2.4}],
               "nvme": {"status": "skipped", "reason": "libaio headers not found"}}
    assert errors(document([TestResult("zero3", "passed", 20.0, metrics)])) == []
    broken = dict(metrics, ops=[{"name": "cpu_adam", "cache": "lukewarm", "seconds": 2.4}])
    del broken["step_seconds"]
    found = errors(document([TestResult("zero3", "passed", 20.0, broken)]))
    assert any("step_seconds" in e for e in found) and any("lukewarm" in e for e in found)
    # a failed run may lack them: it reports what it got to
    assert errors(document([TestResult("zero3", "failed", 3.0, {"cause": "no_ninja"}, "ninja is not on PATH")])) == []
