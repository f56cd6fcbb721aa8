"""A planted journal or manifest naming `PREFIX/../outside/x` (or a link out of the environment) is refused before
anything changes (issue 30.2): paths are resolved before they are compared with the environment's."""

from __future__ import annotations

import os

import pytest

from envdoctor.install.installer import _may_touch, resolved
from tests.install.test_unlucky import _state_dir, plant_journal
from tests.test_install import fake_torch, fix, freeze, undo


def _env(tmp_path):
    prefix = tmp_path / "env"
    site = prefix / "lib" / "python3.12" / "site-packages"
    site.mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (site / "link").symlink_to(tmp_path / "outside")
    desc = {"prefix": str(prefix), "paths": {"purelib": str(site), "platlib": str(site), "scripts": str(prefix / "bin")},
            "dists": [{"name": "torch", "version": "1", "files": [str(site / "torch" / "__init__.py")]}]}
    return desc, prefix, site


def test_dot_dot_and_links_out_of_the_environment_are_outside(tmp_path):
    desc, prefix, site = _env(tmp_path)
    may_touch = _may_touch(desc)
    assert may_touch(str(site / "torch" / "__init__.py")) and may_touch(str(prefix / "bin" / "x"))
    assert may_touch(str(site / "link"))  # the link itself is the environment's
    for bad in (f"{prefix}/../outside/x", f"{site}/../../../../outside/x", f"{site}/link/x", f"{prefix}/..",
                f"{prefix}/x\0y", "relative/x", ""):
        assert not may_touch(bad), bad


def test_resolved_keeps_the_last_part_and_resolves_the_rest(tmp_path):
    desc, prefix, site = _env(tmp_path)
    assert resolved(f"{site}/link/x") == os.path.join(os.path.realpath(tmp_path / "outside"), "x")
    assert resolved(f"{site}/link") == os.path.join(os.path.realpath(site), "link")
    assert resolved(f"{prefix}/..") == ""


@pytest.mark.slow
@pytest.mark.hostile("refused")
@pytest.mark.parametrize("op", ["undo", "fix"])
def test_undo_refuses_a_journal_reaching_out_with_dot_dot(site, op):
    elsewhere = site.tmp / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "canary").write_text("still here")
    site.index.add_torch(fake_torch(site.tmp, "2.14.1+cpu", requires=["fakedep>=2"]))
    assert fix(site, "--yes").returncode == 0
    after = freeze(site)
    sdir = _state_dir(site)
    [bdir] = list(sdir.glob("backup*"))
    escape = f"{site.venv}/../elsewhere/canary"
    journal = {"op": op, "id": "y", "pid": 1, "started": "T", "before": {}, "backup": str(bdir)}
    if op == "undo":
        journal["remove"] = [escape]
    else:
        [lib] = [str(p) for p in site.venv.glob("lib/python3.*/site-packages")]
        # the rollback would put back every file of the listing: the planted one names a file outside
        journal.update(roots=sorted({lib, str(site.venv / "bin")}), before_files={escape: [1, 1]})
    plant_journal(sdir, journal)
    res = undo(site)
    assert res.returncode == 3, res.stderr
    assert "outside the environment" in res.stderr and "nothing was changed" in res.stderr
    assert (elsewhere / "canary").read_text() == "still here"
    assert freeze(site) == after
