"""The torch and python probes run in a child of the target interpreter; a broken torch is a fact."""

from __future__ import annotations

import os
import sys
import time

import pytest

from envdoctor.probes import pyenv, torch_probe, torch_sections
from envdoctor.probes.base import ProbeContext
from envdoctor.snapshot import Unavailable
from tests.conftest import USER_HOME


def fake_torch(tmp_path, init_body: str, version: str = "2.4.1"):
    """A `torch` distribution on PYTHONPATH whose import does `init_body` (the boundary: its files)."""
    site = tmp_path / "site"
    pkg = site / "torch"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(init_body)
    info = site / f"torch-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n")
    return str(site)


def ctx(tmp_path, pythonpath=None, timeout=60.0):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    return ProbeContext(python=sys.executable, env=env, torch_timeout=timeout, timeout=20.0, root=tmp_path)


@pytest.mark.slow  # starts a real torch process
def test_real_cpu_torch_is_seen_through_the_child(tmp_path):
    pytest.importorskip("torch")  # the test extra installs torch 2.13.0+cpu
    out = torch_probe.probe(ctx(tmp_path))
    t = out.sections["torch"]
    assert t.importable and t.version.startswith("2.") and "+cpu" in t.version
    assert isinstance(t.cuda, Unavailable) and t.cuda.reason == "CPU build"
    assert t.arch_list == [] and t.cuda_available is False
    assert t.distributed_backends["gloo"] is True
    assert "torch" not in sys.modules or sys.modules["torch"].__name__ == "torch"  # the test may import it; we do not


def test_torch_whose_import_segfaults(tmp_path):
    site = fake_torch(tmp_path, "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    out = torch_probe.probe(ctx(tmp_path, site))
    t = out.sections["torch"]
    assert t.importable is False and "SIGSEGV" in t.error
    assert out.status == "ok"  # the probe worked: what it found is a broken torch


def test_torch_whose_import_raises(tmp_path):
    site = fake_torch(tmp_path, "raise ImportError('libcudnn.so.9: cannot open shared object file: No such file')\n")
    t = torch_probe.probe(ctx(tmp_path, site)).sections["torch"]
    assert t.importable is False and "libcudnn.so.9" in t.error and t.version == "2.4.1"


@pytest.mark.slow
def test_torch_import_that_hangs_times_out(tmp_path):
    site = fake_torch(tmp_path, "import time\ntime.sleep(60)\n")
    start = time.monotonic()
    out = torch_probe.probe(ctx(tmp_path, site, timeout=2.0))
    assert time.monotonic() - start < 8
    assert out.status == "timeout" and "did not finish" in out.sections["torch"].error


def test_no_torch_installed(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    # -S equivalent: point at an interpreter environment without torch by hiding site-packages
    c = ctx(tmp_path, str(empty))
    c.python = sys.executable
    c.env = {**c.env, "PYTHONNOUSERSITE": "1"}
    data = {"installed": False}
    assert isinstance(torch_sections.torch_from_child(data), Unavailable)


def test_python_env_probe_reads_the_target(tmp_path):
    out = pyenv.probe(ctx(tmp_path))
    env = out.sections["python"]
    assert env.version == ".".join(map(str, sys.version_info[:3]))
    assert env.executable == sys.executable
    assert env.env_kind in ("venv", "uv", "conda", "system")
    assert isinstance(env.packages, dict)


def fake_dist(tmp_path, name, init_body, version="0.16.0"):
    site = tmp_path / "site"
    pkg = site / name
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text(init_body)
    info = site / f"{name}-{version}.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    return site, pkg


@pytest.mark.slow
def test_deepspeed_crash_keeps_the_torch_facts(tmp_path):
    pytest.importorskip("torch")
    site, pkg = fake_dist(tmp_path, "deepspeed", "import os, signal\nos.kill(os.getpid(), signal.SIGABRT)\n")
    (pkg / "git_version_info_installed.py").write_text(
        "version='0.16.0'\ninstalled_ops={'fused_adam': True}\ntorch_info={'version': '2.4', 'cuda_version': '12.1'}\n")
    out = torch_probe.probe(ctx(tmp_path, str(site)))
    t, ds = out.sections["torch"], out.sections["deepspeed"]
    assert t.importable is True and t.version.startswith("2.")
    assert ds.version == "0.16.0" and ds.importable is False and "SIGABRT" in ds.error
    assert ds.torch_info == {"version": "2.4", "cuda_version": "12.1"} and ds.extra["installed_ops"]["fused_adam"]


def test_deepspeed_not_importable_when_torch_is_broken(tmp_path):
    site = fake_torch(tmp_path, "raise ImportError('libcublas.so.12: cannot open shared object file')\n")
    fake_dist(tmp_path, "deepspeed", "raise RuntimeError('never reached')\n")
    out = torch_probe.probe(ctx(tmp_path, site))
    ds = out.sections["deepspeed"]
    assert ds.importable is False and "torch does not import" in ds.error


@pytest.mark.parametrize("version", ["3.7", "3.8"])
def test_children_run_on_old_interpreters(tmp_path, version):
    """The target-side scripts are stdlib-only and run on 3.8+; on 3.7 they still say which Python it is."""
    import glob
    import shutil
    import subprocess

    candidates = sorted(glob.glob(str(USER_HOME / ".pyenv" / "versions" / f"{version}.*" / "bin" / "python")))
    candidates += [p for p in [shutil.which(f"python{version}")] if p]
    found = next((p for p in candidates if subprocess.run([p, "-c", ""], capture_output=True).returncode == 0), None)
    if not found:
        pytest.skip(f"no working Python {version} here")
    c = ctx(tmp_path)
    c.python = found
    env = pyenv.probe(c).sections["python"]
    assert env.version.startswith(version + ".")
    assert isinstance(torch_probe.probe(c).sections["torch"], Unavailable)


def _child_lines(env, without_fork):
    import json
    import subprocess

    script = str(torch_probe.__file__).replace("torch_probe.py", "children/torch_child.py")
    code = ("import os, runpy, sys\n"
            + ("del os.fork\n" if without_fork else "")
            + f"sys.argv = [{script!r}]\nrunpy.run_path({script!r}, run_name='__main__')\n")
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    return [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]


@pytest.mark.slow  # starts a real torch process
def test_the_child_says_the_same_with_and_without_fork(tmp_path):
    """Where there is no fork (Windows), the metadata and DeepSpeed's import run in line: same facts."""
    pytest.importorskip("torch")
    site, pkg = fake_dist(tmp_path, "deepspeed", "raise RuntimeError('no CUDA_HOME')\n")
    env = dict(ctx(tmp_path, str(site)).env)
    forked, inline = _child_lines(env, False), _child_lines(env, True)

    def facts(lines):
        keyed = {next(iter(o)): o[next(iter(o))] for o in lines if len(o) == 1}
        torch = next(o for o in lines if "installed" in o)
        torch = {k: v for k, v in torch.items() if k not in ("loaded_libraries", "mapped_cuda_libraries")}
        return keyed["ecosystem"], keyed["deepspeed"], keyed["deepspeed_import"], torch

    assert facts(forked) == facts(inline)
    assert facts(forked)[2] == {"importable": False, "error": "RuntimeError: no CUDA_HOME"}


@pytest.mark.slow
def test_what_deepspeed_prints_on_import_does_not_reach_the_answer(tmp_path):
    pytest.importorskip("torch")
    site, pkg = fake_dist(tmp_path, "deepspeed", "print('{\"installed\": false}')\nprint('[INFO] ds_accelerator')\n")
    out = torch_probe.probe(ctx(tmp_path, str(site)))
    t, ds = out.sections["torch"], out.sections["deepspeed"]
    assert t.importable is True and t.version.startswith("2.")
    assert ds.importable is True


@pytest.mark.slow
def test_a_companion_that_crashes_does_not_cost_deepspeeds_answer(tmp_path):
    pytest.importorskip("torch")
    site, _ = fake_dist(tmp_path, "deepspeed", "x = 1\n")
    fake_dist(tmp_path, "torchvision", "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n", version="0.20.0")
    out = torch_probe.probe(ctx(tmp_path, str(site)))
    ds, tv = out.sections["deepspeed"], out.sections["torch"].companions["torchvision"]
    assert ds.importable is True and ds.error is None
    assert not tv.importable  # not reached or crashed: never "imports"


@pytest.mark.slow
def test_a_fork_that_fails_imports_deepspeed_in_line(tmp_path):
    """A pids limit or no memory: fork raises; torch's facts and DeepSpeed's answer are those without fork."""
    import json
    import subprocess

    pytest.importorskip("torch")
    site, _ = fake_dist(tmp_path, "deepspeed", "raise RuntimeError('no CUDA_HOME')\n")
    script = str(torch_probe.__file__).replace("torch_probe.py", "children/torch_child.py")
    code = ("import os, runpy, sys\n"
            "def fork():\n    raise BlockingIOError(11, 'Resource temporarily unavailable')\n"
            f"os.fork = fork\nsys.argv = [{script!r}]\nrunpy.run_path({script!r}, run_name='__main__')\n")
    res = subprocess.run([sys.executable, "-c", code], env=dict(ctx(tmp_path, str(site)).env), capture_output=True,
                         text=True, timeout=120)
    lines = [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
    torch_line = next(o for o in lines if "installed" in o)
    assert res.returncode == 0 and torch_line["importable"] is True
    assert next(o["deepspeed_import"] for o in lines if "deepspeed_import" in o) == {
        "importable": False, "error": "RuntimeError: no CUDA_HOME"}
