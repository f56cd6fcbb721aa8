"""`envdoctor index update` against a local PyTorch-style index and a pip-configured simple index."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def page(directory: Path, names) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "index.html").write_text("".join(f'<a href="/f/{n}#sha256=00">{n}</a>\n' for n in names))


def env_for(tmp: Path, **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "ENVDOCTOR_"))}
    env.update(PIP_CONFIG_FILE=os.devnull, XDG_CACHE_HOME=str(tmp / "cache"), **extra)
    return env


def run(argv, env):
    return subprocess.run([sys.executable, "-m", "envdoctor", *argv], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)


def test_update_writes_a_valid_user_copy_the_loader_prefers(tmp_path):
    whl = tmp_path / "whl"
    page(whl / "cu126" / "torch", ["torch-2.14.2+cu126-cp312-cp312-manylinux_2_28_x86_64.whl",
                                   "torch-2.13.0+cu126-cp312-cp312-manylinux_2_28_x86_64.whl"])
    simple = tmp_path / "simple"
    page(simple / "deepspeed", ["deepspeed-0.19.8.tar.gz", "deepspeed-0.20.1.tar.gz"])
    env = env_for(tmp_path, PIP_INDEX_URL=simple.as_uri())
    res = run(["index", "update", "--index-base", whl.as_uri()], env)
    assert res.returncode == 0, res.stderr
    copy = tmp_path / "cache" / "envdoctor" / "wheels_index.json"
    data = json.loads(copy.read_text())
    rel = next(r for r in data["torch"] if r["version"] == "2.14")
    assert rel["latest_patch"] == "2.14.2" and rel["patch_status"] == "verified"
    assert data["deepspeed"]["releases"][0]["version"] == "0.20.1"
    assert data["deepspeed"]["releases"][0]["status"] == "UNVERIFIED"
    res = run(["index", "show"], env)
    assert str(copy) in res.stdout


def test_offline_update_keeps_the_bundled_copy(tmp_path):
    env = env_for(tmp_path, PIP_INDEX_URL="http://127.0.0.1:9/simple")
    res = run(["index", "update", "--index-base", "http://127.0.0.1:9/whl", "--timeout", "2"], env)
    assert res.returncode == 1 and "offline or unreachable" in res.stderr and "Traceback" not in res.stderr
    assert not (tmp_path / "cache" / "envdoctor" / "wheels_index.json").exists()
    assert "wheels_index.json" in run(["index", "show"], env).stdout


def test_dry_run_prints_plan_and_commands():
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENVDOCTOR_")}
    res = run(["fix", "--snapshot", str(ROOT / "tests/data/h100_575.json"), "--dry-run", "--python", "3.11"], env)
    assert res.returncode == 0, res.stderr
    assert "install torch==2.14.1+cu126" in res.stdout
    assert "pip download" in res.stdout and "--extra-index-url https://download.pytorch.org/whl/cu126" in res.stdout
    res = run(["fix", "--snapshot", str(ROOT / "tests/data/h100_575.json"), "--json", "--index-base", "https://m.example/w"], env)
    doc = json.loads(res.stdout)
    assert doc["schema"] == "envdoctor.plan/1" and doc["status"] == "planned"
    assert doc["packages"][0]["index_url"] == "https://m.example/w/cu126"
    assert {"name", "version", "variant", "why"} <= set(doc["rejected"][0])
    res = run(["fix", "--snapshot", str(ROOT / "tests/data/h100_575.json"), "--python", "/usr/bin/python3"], env)
    assert res.returncode == 2 and "names the Python version" in res.stderr
    res = run(["fix", "--snapshot", str(ROOT / "tests/data/h100_575.json"), "--torch", "~~2"], env)
    assert res.returncode == 2 and "not a version specifier" in res.stderr
