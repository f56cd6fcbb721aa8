"""docs/provisioning.md: each recipe's commands are taken from the doc and run, as far as this machine allows.

No Docker, cloud-init or Slurm here: absolute paths in a recipe are moved under a temporary root, `envdoctor`
is this checkout (`python -m envdoctor`), `pip install envdoctor` is skipped, the PyTorch index and the user's
pip index are the 127.0.0.1 ones of tests/test_install.py, and a recipe's snapshot of a target node is the
fixture of an 8x H100-class node (cc 9.0, driver 580.95.05)."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import fixture_path
from tests.test_install import ROOT, fake_torch

DOC = ROOT / "docs" / "provisioning.md"
NODE = fixture_path("h200_8x_healthy")


def blocks(lang: str) -> list:
    return re.findall(rf"^```{lang}\n(.*?)^```$", DOC.read_text(), flags=re.M | re.S)


def index_site(site):
    """The torch index with the builds the recipes pick: cu130 for the target node, cpu for this machine."""
    for version, cuda in (("2.14.1+cu130", "13.0"), ("2.14.1+cpu", None)):
        site.index.add_torch(fake_torch(site.tmp, version, cuda=cuda, archs=["sm_90"] if cuda else [],
                                        requires=["fakedep>=2"]), variant=version.split("+")[1])
    return dict(site.env, ENVDOCTOR_TORCH_INDEX=f"{site.url}/whl")


class Runner:
    """Runs a recipe's commands: absolute paths under `root`, envdoctor from this checkout."""

    def __init__(self, root: Path, env: dict) -> None:
        self.root, self.env, self.ran = root, env, []

    def path(self, word: str) -> str:
        return str(self.root) + word if word.startswith("/") else word

    def run(self, words: list, cwd: Path = None) -> subprocess.CompletedProcess:
        if words[:1] in (["python"], ["python3"]) and words[1:3] == ["-m", "venv"]:
            words = [sys.executable, *words[1:]]
        elif words[0].split("/")[-1] == "pip" and words[1:] == ["install", "envdoctor"]:
            return subprocess.CompletedProcess(words, 0, "", "")  # envdoctor is this checkout
        elif words[0].split("/")[-1] == "envdoctor":
            words = [sys.executable, "-m", "envdoctor", *words[1:]]
        argv = [words[0], *(self.path(w) for w in words[1:])]
        res = subprocess.run(argv, cwd=cwd or self.root, env=self.env, capture_output=True, text=True, timeout=600)
        self.ran.append((argv, res.returncode))
        return res


def torch_in(python: Path, env: dict) -> list:
    res = subprocess.run([str(python), "-c", "import torch, fakedep; print(torch.__version__, torch.version.cuda, fakedep.V)"],
                         capture_output=True, text=True, env=env)
    return res.stdout.split()


@pytest.mark.slow
def test_dockerfile_recipe(site):
    env = index_site(site)
    (dockerfile,) = blocks("dockerfile")
    lines = dockerfile.splitlines()
    assert lines[0].startswith("FROM ") and "ENV PATH=/opt/venv/bin:$PATH" in lines
    runs = [ln[4:] for ln in lines if ln.startswith("RUN ")]
    alternative = [ln.split("RUN ", 1)[1] for ln in lines if ln.startswith("#") and "RUN " in ln]
    root = site.tmp / "image"
    (root / "tmp").mkdir(parents=True)
    shutil.copy(NODE, root / "tmp" / "node.json")  # the recipe's COPY node.json /tmp/node.json
    r = Runner(root, env)
    for run in runs:
        for part in run.split("&&"):
            res = r.run(shlex.split(part))
            assert res.returncode == 0, (part, res.stderr[-2000:])
    assert any("--gpu" in argv for argv, _rc in r.ran), "the recipe's fix --gpu did not run"
    venv_python = root / "opt" / "venv" / "bin" / "python"
    assert torch_in(venv_python, env) == ["2.14.1+cu130", "13.0", "2"]
    # The snapshot variant plans the same for that node: the image already has it.
    (alt,) = alternative
    res = r.run(shlex.split(alt) + ["--json"])
    assert res.returncode == 0 and json.loads(res.stdout)["status"] == "nothing_to_do", res.stderr[-2000:]


def cloud_config(text: str) -> dict:
    """The structure of the recipe's cloud-config (no YAML library here): top-level keys, runcmd's argv lists."""
    lines = text.splitlines()
    assert lines[0] == "#cloud-config"
    doc, key = {}, None
    for ln in lines[1:]:
        m = re.fullmatch(r"([a-z_]+):(?: (.*))?", ln)
        if m:
            key = m.group(1)
            doc[key] = m.group(2) if m.group(2) else []
            continue
        m = re.fullmatch(r"  - \[(.*)\]", ln)
        assert m and key and isinstance(doc[key], list), f"not cloud-config as the recipe writes it: {ln!r}"
        doc[key].append([w.strip() for w in m.group(1).split(",")])
    return doc


def check_strict_semantics(r: Runner, argv_words: list, rc: int) -> None:
    """check --strict exits 1 exactly when check --json has an error or a warning."""
    res = r.run([w for w in argv_words if w != "--strict"] + ["--json"])
    summary = json.loads(res.stdout)["summary"]
    assert rc == (1 if summary["errors"] or summary["warnings"] else 0), summary


@pytest.mark.slow
def test_cloud_init_recipe(site):
    env = index_site(site)
    (text,) = blocks("yaml")[:1]
    doc = cloud_config(text)
    assert doc["packages"] == [] or doc["package_update"] == "true"
    root = site.tmp / "vm"
    root.mkdir()
    r = Runner(root, env)
    for words in doc["runcmd"]:
        res = r.run(words)
        if words[1:2] == ["check"]:
            assert res.returncode in (0, 1), res.stderr[-2000:]
            check_strict_semantics(r, words, res.returncode)
        else:
            assert res.returncode == 0, (words, res.stderr[-2000:])
    # This machine has no NVIDIA GPU: fix planned and installed the CPU build for it.
    assert torch_in(root / "opt" / "venv" / "bin" / "python", env) == ["2.14.1+cpu", "None", "2"]


@pytest.mark.parametrize("snapshot,drains", [("h200_8x_healthy", False), ("rtx5090_driver_565", True), (None, False)])
def test_slurm_prolog_drains_only_on_findings(tmp_path, snapshot, drains):
    (script,) = blocks("bash")
    assert script.startswith("#!/bin/bash\n") and "check --python /opt/venv --strict" in script
    wrapper = tmp_path / "envdoctor"
    wrapper.write_text(f"#!/bin/bash\nexec {shlex.quote(sys.executable)} -m envdoctor \"$@\"\n")
    wrapper.chmod(0o755)
    where = f"--snapshot {fixture_path(snapshot)}" if snapshot else f"--snapshot {tmp_path / 'missing.json'}"
    prolog = tmp_path / "prolog.sh"
    prolog.write_text(script.replace("/opt/envdoctor/bin/envdoctor", str(wrapper)).replace("--python /opt/venv", where))
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(tmp_path), "NO_COLOR": "1"}
    res = subprocess.run(["bash", str(prolog)], capture_output=True, text=True, env=env, timeout=300)
    check = subprocess.run([str(wrapper), "check", *where.split(), "--strict"], capture_output=True, text=True, env=env)
    assert res.returncode == (1 if drains else 0), res.stderr
    assert check.returncode == (1 if drains else 0 if snapshot else 2)  # the prolog's decision follows check's exit
    assert ("node not ready" in res.stderr) == drains
    assert ("could not run (exit 2)" in res.stderr) == (snapshot is None)


@pytest.mark.slow
def test_ci_job_recipe(site):
    env = index_site(site)
    text = next(b for b in blocks("yaml") if b.startswith("name: "))
    assert re.search(r"^jobs:\n  \w+:\n    runs-on: .+\n    steps:\n", text, flags=re.M)
    steps = re.findall(r"^      - run: (.*)$", text, flags=re.M)
    assert steps and all(ln.startswith(("      - ", "        ")) for ln in text.split("    steps:\n")[1].splitlines())
    work = site.tmp / "repo"
    (work / "ci").mkdir(parents=True)
    shutil.copy(NODE, work / "ci" / "node.json")
    r = Runner(site.tmp / "ci-root", env)
    (site.tmp / "ci-root").mkdir()
    git = ["git", "-c", "user.email=ci@example.invalid", "-c", "user.name=ci"]
    ran_fix = 0
    for step in steps:
        for part in step.split("&&"):
            words = shlex.split(part)
            if words[:3] == ["git", "diff", "--exit-code"]:
                # The lock committed on the first run is current: a second run writes the same file.
                subprocess.run(["git", "init", "-q"], cwd=work, check=True)
                subprocess.run([*git, "add", "requirements-torch.txt"], cwd=work, check=True)
                subprocess.run([*git, "commit", "-qm", "lock"], cwd=work, check=True)
                again = r.run(shlex.split(next(s for s in steps if "--format" in s)), cwd=work)
                assert again.returncode == 0, again.stderr[-2000:]
            res = r.run(words, cwd=work) if words[0] != "git" else subprocess.run(words, cwd=work, capture_output=True, text=True)
            assert res.returncode == 0, (part, res.stdout[-2000:], res.stderr[-2000:])
            ran_fix += words[0].endswith("envdoctor")
    assert ran_fix == 1
    lock = (work / "requirements-torch.txt").read_text()
    assert "torch==2.14.1+cu130 \\\n    --hash=sha256:" in lock and f"--extra-index-url {site.url}/whl/cu130" in lock
    assert torch_in(work / ".venv" / "bin" / "python", env) == ["2.14.1+cu130", "13.0", "2"]
