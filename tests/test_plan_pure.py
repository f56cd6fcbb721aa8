"""plan(snapshot, index, wishes) is a pure function: the index and the wishes come in, nothing is read inside."""

from __future__ import annotations

from envdoctor.snapshot import load_snapshot
from envdoctor.wheels.index import load_index
from envdoctor.wheels.planner import facts_from_snapshot, plan
from envdoctor.wheels.wishes import Wishes
from tests.conftest import fixture_path


def test_the_environment_and_the_user_cache_do_not_change_a_plan(tmp_path, monkeypatch):
    snap = load_snapshot(fixture_path("b200_driver_575"))
    index = load_index()
    wishes = Wishes.from_options(None, "", None, "https://m.example/whl")
    before = plan(snap, index, wishes).to_json()
    (tmp_path / "envdoctor").mkdir()
    (tmp_path / "envdoctor" / "wheels_index.json").write_text("not an index")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("ENVDOCTOR_WHEELS_INDEX", str(tmp_path / "missing.json"))
    monkeypatch.setenv("ENVDOCTOR_TORCH_INDEX", "ftp://bad")
    assert plan(snap, index, wishes).to_json() == before
    assert before["packages"][0]["index_url"] == "https://m.example/whl/cu128" and before["status"] == "planned"


def test_a_snapshot_plans_like_its_facts_for_the_wished_python():
    snap = load_snapshot(fixture_path("t4_cpu_torch"))
    index = load_index()
    wishes = Wishes.from_options(None, None, "3.12", index.default_index_base)
    assert plan(snap, index, wishes).to_json() == plan(facts_from_snapshot(snap, "3.12"), index, wishes).to_json()
    assert plan(snap, index, wishes).python == "3.12"
