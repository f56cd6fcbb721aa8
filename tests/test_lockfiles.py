"""The lock formats of `fix --format` (envdoctor.present.lockfiles), from a plan and pip's resolution: what is
pinned, which index lines, hashes all-or-none, kept packages locked too, and no credentials in any output."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from envdoctor.present import lockfiles
from envdoctor.wheels.planner import Plan, PlannedPackage

tomllib = pytest.importorskip("tomllib")

SECRET = "s3cr3t-pw"
BASE = f"https://user:{SECRET}@mirror.example/whl"


def a_plan() -> Plan:
    p = Plan(status="planned", python="3.12", platform="linux_x86_64", kept=["deepspeed 0.19.8"])
    p.packages.append(PlannedPackage("torch", "2.11.0", "cu128", f"{BASE}/cu128", "why", "torch==2.11.0+cu128"))
    return p


def installs(hashed=True):
    torch_url = "https://mirror.example/files/torch-2.11.0%2Bcu128-cp312-cp312-manylinux_2_28_x86_64.whl"
    rows = [("torch", "2.11.0+cu128", torch_url, True),
            ("filelock", "3.20.0", "https://pypi.example/f/filelock-3.20.0-py3-none-any.whl", False),
            ("deepspeed", "0.19.8", "https://pypi.example/f/deepspeed-0.19.8.tar.gz", False)]
    return [{"name": n, "version": v, "url": u, "hashed": hashed, "requested": r,
             **({"hashes": {"sha256": f"{i:064x}"}} if hashed else {})} for i, (n, v, u, r) in enumerate(rows)]


def test_lock_plan_pins_what_the_plan_keeps():
    locked = lockfiles.lock_plan(a_plan(), BASE)
    assert [p.pin for p in locked.packages] == ["torch==2.11.0+cu128", "deepspeed==0.19.8"]
    assert locked.packages[1].index_url is None and locked.kept == []
    kept_torch = Plan(status="nothing_to_do", python="3.12", platform="linux_x86_64", kept=["torch 2.14.1+cu130"])
    (torch,) = lockfiles.lock_plan(kept_torch, "https://m.example/whl/").packages
    assert (torch.pin, torch.index_url) == ("torch==2.14.1+cu130", "https://m.example/whl/cu130")


def test_requirements_pins_every_file_with_its_hash_and_the_index_lines():
    text = lockfiles.requirements(a_plan(), installs(), f"https://u:{SECRET}@pypi.example/simple")
    assert "--index-url https://pypi.example/simple\n--extra-index-url https://mirror.example/whl/cu128\n" in text
    assert text.index("torch==2.11.0+cu128 \\\n    --hash=sha256:") < text.index("filelock==3.20.0 \\\n    --hash=")
    assert text.count("--hash=sha256:") == 3 and SECRET not in text


def test_requirements_without_every_hash_has_none_and_pip_default_index_is_not_named():
    rows = installs()
    del rows[1]["hashes"]
    text = lockfiles.requirements(a_plan(), rows, None)
    assert "--hash=" not in text and "no hash is published for filelock" in text
    assert "--index-url" not in text.replace("--extra-index-url", "")


def test_pylock_is_pep_751():
    lock = tomllib.loads(lockfiles.pylock(a_plan(), installs()))
    assert lock["lock-version"] == "1.0" and lock["created-by"] == "envdoctor" and lock["requires-python"] == "==3.12.*"
    assert lock["environments"] == ["python_version == '3.12' and sys_platform == 'linux' and platform_machine == 'x86_64'"]
    torch, filelock, deepspeed = lock["packages"]
    assert torch["index"] == "https://mirror.example/whl/cu128" and torch["version"] == "2.11.0+cu128"
    assert torch["wheels"][0]["name"] == "torch-2.11.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl"
    assert filelock["wheels"][0]["hashes"] == {"sha256": f"{1:064x}"} and "index" not in filelock
    assert deepspeed["sdist"]["url"].endswith("deepspeed-0.19.8.tar.gz") and "wheels" not in deepspeed
    with pytest.raises(lockfiles.LockError, match="no hash for torch, filelock, deepspeed"):
        lockfiles.pylock(a_plan(), installs(hashed=False))


def test_uv_snippet_has_an_explicit_index_for_torch_only():
    text = lockfiles.uv_snippet(lockfiles.lock_plan(a_plan(), BASE))
    doc = tomllib.loads(text)
    assert doc["tool"]["uv"]["sources"] == {"torch": {"index": "pytorch-cu128"}}
    assert doc["tool"]["uv"]["index"] == [{"name": "pytorch-cu128", "url": "https://mirror.example/whl/cu128",
                                           "explicit": True}]
    assert '# [project] dependencies: "torch==2.11.0+cu128", "deepspeed==0.19.8"' in text and SECRET not in text


@pytest.mark.parametrize("name,ok", [("pylock.toml", True), ("pylock.gpu.toml", True), ("lock.toml", False),
                                     ("pylock.a.b.toml", False)])
def test_pylock_file_names(name, ok):
    assert bool(lockfiles.PYLOCK_NAME.fullmatch(name)) == ok


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_a_toml_string_reads_back_as_itself(text):
    # json.dumps wrote a character beyond the BMP as a surrogate-pair escape, which tomllib rejects.
    expected = "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text)
    assert tomllib.loads(f"v = {lockfiles._toml(text)}")["v"] == expected


def test_a_lock_with_a_character_beyond_the_bmp_is_valid_toml():
    value = "pytorch-\U0001F680 \\ \"quoted\" \x7f"
    doc = tomllib.loads(f"name = {lockfiles._toml(value)}\nt = {lockfiles._toml({'k': [value, 'b']})}")
    assert doc == {"name": value, "t": {"k": [value, "b"]}}


def _with_local_file(rows):
    rows[1]["url"] = "file:///opt/wheels/filelock-3.20.0-py3-none-any.whl"
    return rows


def test_requirements_and_pylock_warn_of_local_links_from_the_pip_configuration():
    # PIP_FIND_LINKS=/opt/wheels or a file:// index: the lock would name files only this machine has (issue 31).
    rows = _with_local_file(installs())
    assert lockfiles.local_links(rows) == ["file:///opt/wheels"]
    assert lockfiles.local_links(installs(), "file:///srv/simple") == ["file:///srv/simple"]
    assert lockfiles.local_links(installs(), "https://pypi.example/simple") == []
    for text in (lockfiles.requirements(a_plan(), rows, None), lockfiles.pylock(a_plan(), rows)):
        assert "# WARNING: this lock names local links" in text and "will not work on another machine" in text
    assert "WARNING" not in lockfiles.requirements(a_plan(), installs(), None)
    assert "WARNING" not in lockfiles.pylock(a_plan(), installs())
    assert tomllib.loads(lockfiles.pylock(a_plan(), rows))["packages"]


def test_requirements_without_a_resolution_pins_the_plan_and_says_hashes_were_left_out():
    text = lockfiles.requirements_unhashed(lockfiles.lock_plan(a_plan(), BASE), None, "cannot reach the index")
    assert "# hashes left out: pip could not resolve the files (cannot reach the index)" in text
    assert "--extra-index-url https://mirror.example/whl/cu128\n" in text and SECRET not in text
    assert text.endswith("torch==2.11.0+cu128\ndeepspeed==0.19.8\n") and "--hash" not in text


def a_fix_plan() -> Plan:
    """A plan of every kind of install step: the torch build, torch's own requirements (resolved with torch held)
    and an extension rebuilt from source."""
    p = a_plan()
    p.requirements = ["sympy>=1.13.3", "nvidia-nccl-cu12==2.21.5"]
    p.rebuilds = ["xformers==0.0.28"]
    return p


def test_every_lock_names_the_requirements_steps_and_says_a_rebuild_is_not_lockable():
    plan = a_fix_plan()
    rows = installs() + [{"name": "sympy", "version": "1.14.0", "url": "https://pypi.example/f/sympy-1.14.0-py3-none-any.whl",
                          "hashed": True, "requested": True, "hashes": {"sha256": "f" * 64}}]
    note = "xformers==0.0.28: built from source, not lockable"
    unhashed = lockfiles.requirements_unhashed(plan, None, "offline")
    lines = unhashed.splitlines()
    assert "sympy>=1.13.3" in lines and "nvidia-nccl-cu12==2.21.5" in lines and "torch==2.11.0+cu128" in lines
    assert any(ln.startswith("# ") and note in ln for ln in lines) and "xformers==0.0.28" not in [ln.strip() for ln in lines]
    hashed = lockfiles.requirements(plan, rows, None)
    assert "sympy==1.14.0 \\\n    --hash=sha256:" in hashed and f"# {note}" in hashed
    assert "sympy>=1.13.3" in hashed.splitlines()[0]  # the header names every step's pins
    text = lockfiles.pylock(plan, rows)
    lock = tomllib.loads(text)
    assert "sympy" in {p["name"] for p in lock["packages"]} and "xformers" not in {p["name"] for p in lock["packages"]}
    assert f"# {note}" in text
    uv = lockfiles.uv_snippet(plan)
    assert '"sympy>=1.13.3"' in uv and f"# {note}" in uv
