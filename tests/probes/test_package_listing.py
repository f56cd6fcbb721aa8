"""The Python probe's package list: whole when every installed distribution was read, partial (an absent
package is unknown, not "not installed") when the listing was cut short or a dist-info could not be read."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from envdoctor.probes import pyenv
from envdoctor.probes.base import ProbeContext
from envdoctor.snapshot import Snapshot, Unavailable, is_unknown, partial_reason


def _dist(site: Path, name: str, version: str) -> None:
    info = site / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8")


def _probe(site: Path) -> Snapshot:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "ENVDOCTOR_"))}
    env["PYTHONPATH"] = str(site)
    out = pyenv.probe(ProbeContext(python=sys.executable, env=env, timeout=60.0))
    snap = Snapshot(python=out.sections["python"], extensions=out.sections["extensions"])
    return snap


@pytest.fixture
def site(tmp_path: Path) -> Path:
    d = tmp_path / "site"
    _dist(d, "triton", "3.1.0")
    return d


def test_a_listing_that_read_everything_is_whole(site: Path) -> None:
    snap = _probe(site)
    assert partial_reason(snap.python.packages) is None
    assert snap.package("triton") == "3.1.0"
    assert isinstance(snap.package("flash-attn"), Unavailable)  # whole list: known not installed


def test_an_unreadable_dist_info_makes_the_list_partial(site: Path) -> None:
    (site / "mystery-1.0.dist-info").mkdir()  # no METADATA: it could be any package
    snap = _probe(site)
    why = partial_reason(snap.python.packages)
    assert why is not None and "unreadable metadata" in why and "mystery-1.0.dist-info" in why
    assert snap.package("triton") == "3.1.0"  # what was read stays a fact
    assert is_unknown(snap.package("flash-attn"))  # what was not is unknown, not "not installed"
    assert partial_reason(snap.extensions) == why


def test_a_listing_cut_short_by_its_deadline_makes_the_list_partial(site: Path, monkeypatch) -> None:
    monkeypatch.setattr(pyenv, "LISTING_SHARE", 0.0)  # no time at all to read the distributions
    snap = _probe(site)
    why = partial_reason(snap.python.packages)
    assert why is not None and "ran out of time" in why
    assert is_unknown(snap.package("triton"))


def test_a_partial_list_travels_through_the_snapshot_json(site: Path) -> None:
    from envdoctor.snapshot import snapshot_from_json

    (site / "mystery-1.0.dist-info").mkdir()
    snap = _probe(site)
    snap.created = "2026-01-01T00:00:00Z"
    doc = snap.to_json()
    assert doc["partial"]["python.packages"] == partial_reason(snap.python.packages)
    back = snapshot_from_json(doc)
    assert is_unknown(back.package("flash-attn"))
