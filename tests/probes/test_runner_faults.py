"""All probes together under faults: the snapshot still comes back, within the bound, with records."""

from __future__ import annotations

import os
import stat
import sys
import time

import pytest

from envdoctor.probes.base import ProbeContext
from envdoctor.probes.runner import PROBE_NAMES, PROBES, ProbeSpec, ProbingCancelled, assemble, run_probes
from envdoctor.snapshot import ProbeFailed
from tests.probes.fake_nvml import LIBRARY_NOT_FOUND, FakeNvml
from tests.probes.test_torch_probe import fake_torch


@pytest.mark.slow
def test_faults_everywhere_still_give_a_snapshot(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    smi = bindir / "nvidia-smi"
    smi.write_text("#!/bin/sh\nsleep 60\n")  # a GPU in a bad state makes nvidia-smi hang
    smi.chmod(smi.stat().st_mode | stat.S_IEXEC)
    site = fake_torch(tmp_path, "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    root = tmp_path / "root"
    (root / "sys" / "devices" / "system" / "node" / "node0" / "cpulist").mkdir(parents=True)  # unreadable
    env = {"PATH": f"{bindir}{os.pathsep}/usr/bin:/bin", "PYTHONPATH": site}
    ctx = ProbeContext(python=sys.executable, root=root, env=env, nvml=FakeNvml(init_error=LIBRARY_NOT_FOUND),
                       timeout=4.0, torch_timeout=30.0)
    start = time.monotonic()
    snap = run_probes(ctx)
    elapsed = time.monotonic() - start
    assert elapsed < ctx.torch_timeout + 2.0
    records = {p.name: p for p in snap.probes}
    assert set(records) == set(PROBE_NAMES)
    assert records["nvml"].status == "timeout" and "timed out" in records["nvml"].error
    assert snap.torch.importable is False and "SIGSEGV" in snap.torch.error
    assert isinstance(snap.driver, ProbeFailed)
    assert snap.host.numa_nodes[0].cpus.reason == "cpulist unreadable"
    assert snap.to_json()["schema"] == "envdoctor.snapshot/1"


@pytest.mark.slow
def test_a_probe_that_raises_or_hangs_becomes_a_record(monkeypatch):
    def boom(ctx):
        raise KeyError("ASCEND_HOME_PATH")  # the kind of bug ds_report ships

    def hang(ctx):
        time.sleep(30)

    specs = (ProbeSpec("system", boom, ("host",)), ProbeSpec("network", hang, ("network", "fabric_manager")))
    monkeypatch.setattr("envdoctor.probes.runner.PROBES", specs)
    start = time.monotonic()
    snap = run_probes(ProbeContext(timeout=1.0, torch_timeout=1.0))
    assert time.monotonic() - start < 6
    records = {p.name: p for p in snap.probes}
    assert records["system"].status == "failed" and "KeyError" in records["system"].error
    assert records["network"].status == "timeout"
    assert isinstance(snap.network, ProbeFailed) and isinstance(snap.fabric_manager, ProbeFailed)


def test_the_torch_probe_starts_first():
    assert PROBES[0].name == "torch" and PROBES[0].slow


def test_assemble_marks_owned_sections_of_a_failed_probe():
    from envdoctor.snapshot import ProbeRecord

    spec = next(p for p in PROBES if p.name == "cuda_toolkit")
    snap = assemble([(ProbeRecord(name="cuda_toolkit", status="failed", error="boom"), None)], [spec])
    assert isinstance(snap.cuda_toolkit, ProbeFailed) and isinstance(snap.build_tools, ProbeFailed)


@pytest.mark.slow
def test_macos_and_windows_degrade_to_records(tmp_path, monkeypatch):
    import platform

    for system_name, os_name in (("Darwin", "darwin"), ("Windows", "windows")):
        monkeypatch.setattr(platform, "system", lambda name=system_name: name)
        ctx = ProbeContext(python=sys.executable, root=tmp_path, env={"PATH": ""},
                           nvml=FakeNvml(init_error=LIBRARY_NOT_FOUND), timeout=5.0, torch_timeout=60.0)
        snap = run_probes(ctx)
        assert snap.host.os == os_name
        assert snap.host.shm_bytes.reason.startswith("not Linux")
        records = {p.name: p.status for p in snap.probes}
        assert records["system"] == "ok" and records["nvml"] == "skipped"
        assert "failed" not in records.values()


def test_a_cancelled_wait_ends_while_torch_hangs_and_stop_all_ends_the_child(tmp_path):
    """The TUI quitting while `import torch` hangs (a CUDA init stuck on a bad GPU): the wait ends at once instead
    of at the torch deadline, and the gateway's stop_all takes the child down."""
    import psutil

    from envdoctor.processes import stop_all

    pid_file = tmp_path / "torch-child.pid"
    site = fake_torch(tmp_path, f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
                                "time.sleep(600)\n")
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": site}
    ctx = ProbeContext(python=sys.executable, root=tmp_path, env=env, nvml=FakeNvml(init_error=LIBRARY_NOT_FOUND),
                       timeout=10.0, torch_timeout=600.0)
    finished = []
    start = time.monotonic()
    try:  # cancelled once torch is hanging in its import
        run_probes(ctx, on_event=lambda event: finished.append(event.record.name), cancelled=pid_file.exists)
        raise AssertionError("run_probes returned a snapshot after it was cancelled")
    except ProbingCancelled:
        pass
    assert time.monotonic() - start < 300  # not the torch deadline (600 s)
    assert "torch" not in finished
    child = psutil.Process(int(pid_file.read_text()))
    assert stop_all() >= 1
    child.wait(60)  # psutil.TimeoutExpired if it is still alive
    assert not child.is_running()


# --- what probes declare ------------------------------------------------------------------------------------

def test_every_snapshot_section_is_provided_by_exactly_one_probe():
    import dataclasses

    from envdoctor.snapshot import Snapshot

    sections = [f.name for f in dataclasses.fields(Snapshot) if f.name not in ("extra", "created", "probes")]
    providers = [s for p in PROBES for s in p.provides]
    assert sorted(providers) == sorted(sections)


def test_what_a_probe_needs_another_provides_or_shares_and_what_it_shares_is_needed():
    provided = {s for p in PROBES for s in p.provides}
    shared = {s for p in PROBES for s in p.shares}
    for spec in PROBES:
        assert (spec.merge is None) == (not spec.needs), spec.name  # needs are read by its merge step
        for need in spec.needs:
            assert need in shared or need in provided, f"{spec.name} needs {need}, which no probe gives"
            assert need not in spec.shares and need not in spec.provides
    assert shared == {n for p in PROBES for n in p.needs if n in shared}
    assert not shared & provided  # a shared value is no snapshot section


def test_a_probe_that_returns_an_undeclared_section_or_value_is_a_failed_record(monkeypatch):
    from envdoctor.probes.base import ProbeOutput
    from envdoctor.snapshot import CudaToolkit

    def sneaky(ctx):
        return ProbeOutput({"cuda_toolkit": CudaToolkit(), "torch": None})

    def leaky(ctx):
        return ProbeOutput({"cuda_toolkit": CudaToolkit()}, shared={"secret": 1})

    for fn, what in ((sneaky, "torch"), (leaky, "secret")):
        monkeypatch.setattr("envdoctor.probes.runner.PROBES", (ProbeSpec("cuda_toolkit", fn, ("cuda_toolkit",)),))
        snap = run_probes(ProbeContext(timeout=5.0))
        [record] = snap.probes
        assert record.status == "failed" and what in record.error
        assert isinstance(snap.cuda_toolkit, ProbeFailed)


def test_assemble_hands_shared_values_to_the_probe_that_needs_them():
    from envdoctor.probes.base import ProbeOutput
    from envdoctor.snapshot import BuildTools, CudaToolkit, Extension, Libraries, ProbeRecord, PythonEnv, Unavailable

    specs = {p.name: p for p in PROBES}
    toolkit = ProbeOutput({"cuda_toolkit": CudaToolkit(), "build_tools": BuildTools()})
    libs = ProbeOutput({"libraries": Libraries()}, shared={"libaio": True})
    python = ProbeOutput({"python": PythonEnv(version="3.11"), "extensions": [Extension(name="xformers")]})
    torch = ProbeOutput({}, shared={"extension_imports": {"xformers": {"importable": False, "import_error": "boom"}}})
    ok = [ProbeRecord(name=n, status="ok") for n in ("cuda_toolkit", "cuda_libraries", "python", "torch")]
    snap = assemble(list(zip(ok, [toolkit, libs, python, torch])),
                    [specs[n] for n in ("cuda_toolkit", "cuda_libraries", "python", "torch")])
    assert snap.build_tools.libaio is True
    assert snap.extensions[0].importable is False and snap.extensions[0].import_error == "boom"
    alone = assemble([(ok[0], ProbeOutput({"cuda_toolkit": CudaToolkit(), "build_tools": BuildTools()}))],
                     [specs["cuda_toolkit"]])
    assert alone.build_tools.libaio == Unavailable("loader cache not read")
