"""fleet collect by groups (issue 29 item 3): the same document as the flat gather for the same nodes, whatever
the group size; a hostile member is a bad node and its group is still collected; a leader that dies is read
around, one that garbles its group's document leaves its members reported not collected (leader lost), and
the other groups survive; a node that never comes is named as in the flat gather. Rank 0 and a few dozen
nodes run in this process (bench/fleet_sim.py: store clients in threads against one TCPStore on 127.0.0.1)."""

from __future__ import annotations

import copy
import importlib.util
import json
import sys
import zlib

import pytest

from envdoctor.errors import InputError
from envdoctor.fleet import collect
from envdoctor.fleet.gather import Gather
from envdoctor.fleet.nodes import Bodies, with_identities
from envdoctor.present.fleet import render_collection
from envdoctor.present.style import Style
from envdoctor.settings import Settings
from envdoctor.usecases.fleet import diagnose_collected, gather_plan
from tests.conftest import ROOT, run_cli
from tests.json_schemas import assert_valid

pytest.importorskip("torch.distributed")

KNOW = Settings.from_env({}).knowledge()
NODES = 37  # not a multiple of the group sizes below: the last group is short


def _bench(name):
    if name in sys.modules:
        return sys.modules[name]
    sys.path.insert(0, str(ROOT / "bench"))
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def messages():
    nodes = _bench("fleet_nodes")
    base = json.loads(nodes.RECORDED.read_text())
    return {r: json.dumps({"hostname": f"node{r:05d}", "file": "", "snapshot": nodes.node_document(base, r, NODES)})
            for r in range(NODES)}


def _simulate(messages, gather, hostile=None, timeout=60.0):
    sim = _bench("fleet_sim")
    return sim.simulate(NODES, lambda r: json.loads(messages[r]), lambda got: diagnose_collected(got, KNOW),
                        hostile, timeout=timeout, gather=gather, count=True)


def _comparable(doc):
    """The document without what differs from run to run: timings, the port, the clocks measured."""
    doc = copy.deepcopy(doc)
    doc.pop("collect")
    for n in doc["nodes"]:
        n.pop("clock_offset_s", None)
        n.pop("clock_bound_s", None)
    return doc


@pytest.fixture(scope="module")
def flat(messages):
    out = _simulate(messages, Gather("flat"))
    assert out.code == 0, out.follower_codes
    return out


@pytest.mark.parametrize("group", [8, 5, 2, 40])
def test_by_groups_the_document_is_the_flat_gather_s(messages, flat, group):
    out = _simulate(messages, Gather("hierarchical", group))
    assert out.code == 0 and set(out.follower_codes.values()) == {0}, out.follower_codes
    got = out.collected
    assert got.group == group and not got.missing and not got.lost and not got.bad
    assert len(got.payloads) == NODES
    doc = out.decided.to_json()
    assert_valid(doc)
    assert doc["collect"]["gather"] == "hierarchical" and doc["collect"]["group_size"] == group
    assert flat.decided.to_json()["collect"]["gather"] == "flat"
    assert _comparable(doc) == _comparable(flat.decided.to_json())
    odd = _bench("fleet_nodes").host_name(_bench("fleet_nodes").odd_index(NODES))
    assert f"driver branch differs on {odd} (others: 550)" in [f["title"] for f in doc["findings"]]
    if group < NODES:  # twins share one snapshot document at rank 0: it holds distinct machines, not N copies
        assert len({id(p["snapshot"]) for p in got.payloads.values()}) < NODES // 2


def test_every_node_reads_a_plan_naming_the_absent_not_every_rank_that_arrived(flat):
    assert flat.tally.live["plan"] < 64  # a list of every rank, read by every node, is N^2 bytes at scale


def test_a_hostile_member_is_a_bad_node_and_its_group_is_collected(messages):
    sim = _bench("fleet_sim")
    broken = json.loads(messages[13])
    broken["snapshot"]["gpus"] = "eight"  # arrives intact, is not a snapshot
    hostile = {10: sim.Hostile(payload=b"{not json"), 11: sim.Hostile(payload=b"[]"),
               13: sim.Hostile(payload=json.dumps(broken).encode()), 14: sim.Hostile(clock=b"nan")}
    out = _simulate(messages, Gather("hierarchical", 8), hostile)
    assert out.code == 0, out.follower_codes
    got = out.collected
    assert sorted(got.bad) == [10, 11, 14]  # 13's message is one; its snapshot is what rank 0 cannot use
    assert set(got.payloads) == set(range(NODES)) - {10, 11}  # the rest of group 1 (ranks 8..15) is collected
    result = out.decided
    bad = [f for f in result.findings if f.id == "ED905"]
    assert len(bad) == 4 and result.exit_code() == 1
    assert any("rank 13's snapshot" in f.detail for f in bad)
    doc = result.to_json()
    assert {n["rank"] for n in doc["nodes"] if "problem" in n} == {10, 11, 14}
    assert all(n["arrived"] for n in doc["nodes"]) and doc["collect"]["not_collected"] == []


@pytest.fixture
def quick(monkeypatch):
    """Rank 0's waits past its --timeout, shortened: a dead node never says it read the verdict."""
    monkeypatch.setattr(collect, "GROUP_GRACE", 1.0)
    monkeypatch.setattr(collect, "DONE_TIMEOUT", 5.0)


def test_a_leader_that_dies_is_read_around_and_the_other_groups_survive(messages, quick):
    sim = _bench("fleet_sim")
    out = _simulate(messages, Gather("hierarchical", 8), {16: sim.Hostile(dies=True)}, timeout=15)
    got = out.collected
    assert got.lost_leaders.keys() == {16} and "never sent" in got.lost_leaders[16]
    assert not got.lost and not got.missing  # its members' messages were still in the store
    assert len(got.payloads) == NODES
    assert set(got.clocks) == set(range(1, NODES)) - {16}  # a dead node's clock is unknown, the others measured
    lost = [f for f in out.decided.findings if "group leader" in f.title]
    assert len(lost) == 1 and lost[0].severity == "warning" and lost[0].subjects == ["node00016"]
    assert out.follower_codes[16] == -9 and all(out.follower_codes[r] == 0 for r in range(1, NODES) if r != 16)


def test_a_leader_that_garbles_its_group_leaves_them_not_collected_and_named(messages):
    sim = _bench("fleet_sim")
    out = _simulate(messages, Gather("hierarchical", 8), {24: sim.Hostile(group_doc=b"\x78\x9c garbage")}, timeout=30)
    assert out.code == 0, out.follower_codes
    got = out.collected
    group3 = set(range(24, 32))
    assert set(got.lost) == group3 and set(got.lost.values()) == {24}
    assert "cannot use" in got.lost_leaders[24]
    assert set(got.payloads) == set(range(NODES)) - group3  # the other groups survive
    result = out.decided
    doc = result.to_json()
    assert_valid(doc)
    lost = next(f for f in result.findings if "not collected" in f.title)
    assert lost.severity == "error" and result.exit_code() == 1
    assert lost.subjects == sorted(f"rank{r}" for r in group3) and "(leader lost)" in lost.detail
    entries = {n["rank"]: n for n in doc["nodes"]}
    assert {r for r, n in entries.items() if "not_collected" in n} == group3
    assert entries[25]["not_collected"] == "leader lost: rank24 (rank 24)"
    assert doc["collect"]["not_collected"] == sorted(f"rank{r}" for r in group3)
    assert doc["collect"]["missing"] == []  # not collected is not "never arrived"
    assert all(out.follower_codes[r] == 0 for r in range(1, NODES))  # every node still got the verdict
    text = render_collection(result, Style(False))
    assert "not collected (group leader lost: rank24): rank24, rank25, rank26" in text
    assert "gathered by groups of 8 nodes" in text and len(text.splitlines()) <= 60


def test_a_node_that_never_comes_is_named_as_in_the_flat_gather(messages, quick):
    sim = _bench("fleet_sim")
    out = _simulate(messages, Gather("hierarchical", 8), {19: sim.Hostile(absent=True)}, timeout=15)
    got = out.collected
    assert got.missing == [19] and not got.lost and not got.lost_leaders
    assert set(got.payloads) == set(range(NODES)) - {19}
    missing = next(f for f in out.decided.findings if "never arrived" in f.title)
    assert missing.subjects == ["rank19"]


def _raw(doc):
    return json.dumps({"hostname": "h", "file": "", "snapshot": doc}).encode()


def test_a_group_document_keeps_each_machine_once_and_every_node_s_identities(messages):
    raws = {r: messages[r].encode() for r in range(8, 16)}
    raws[12] = b"{not json"
    members, bad = collect.read_group_document(collect.group_document(1, raws), 1, range(8, 16))
    assert list(bad) == [12] and [m.rank for m in members] == [8, 9, 10, 11, 13, 14, 15]
    doc = json.loads(zlib.decompress(collect.group_document(1, raws)))
    assert len(doc["bodies"]) < len(members)
    for m in doc["members"]:  # each node's own snapshot comes back from its body and its identities
        assert with_identities(doc["bodies"][m["body"]], m.get("ids")) == json.loads(messages[m["rank"]])["snapshot"]
        assert m["host"] == f"node{m['rank']:05d}"


def test_bodies_keep_a_document_whose_identities_are_not_of_their_type_on_its_own(messages):
    one = json.loads(messages[1])["snapshot"]
    odd = copy.deepcopy(one)
    odd["gpus"][0]["uuid"] = 7
    bodies = Bodies()
    assert bodies.add(copy.deepcopy(one)) == (0, None)
    assert bodies.add(odd)[0] == 1 and bodies.add(copy.deepcopy(odd))[0] == 2
    assert bodies.add(copy.deepcopy(one))[0] == 0


@pytest.mark.parametrize("doc, why", [
    ({"group": 2, "bodies": [], "members": [], "bad": []}, "not group 1"),
    ({"group": 1, "bodies": {}, "members": [], "bad": []}, "not lists"),
    ({"group": 1, "bodies": [{}], "members": [{"rank": 99, "body": 0, "meta": {}}], "bad": []}, "not one of its group"),
    ({"group": 1, "bodies": [{}], "members": [{"rank": 8, "body": 0, "meta": {}}], "bad": [[8, "x"]]}, "twice"),
    ({"group": 1, "bodies": [{}], "members": [{"rank": 8, "body": 3, "meta": {}}], "bad": []}, "body"),
    ({"group": 1, "bodies": [{}], "members": [{"rank": True, "body": 0, "meta": {}}], "bad": []}, "not one of"),
    ({"group": 1, "bodies": [{}], "members": [{"rank": 8, "body": 0, "meta": {"hostname": 3}}], "bad": []}, "host name"),
    ({"group": 1, "bodies": [], "members": [], "bad": [[8]]}, "[rank, why]"),
])
def test_a_group_document_that_is_not_one_is_refused_with_why(doc, why):
    with pytest.raises(ValueError, match=__import__("re").escape(why)):
        collect.read_group_document(zlib.compress(json.dumps(doc).encode()), 1, range(8, 16))


@pytest.mark.parametrize("raw", [b"", b"not zlib", zlib.compress(b"{not json"), zlib.compress(b"[]"),
                                 zlib.compress(b"0" * (collect.GROUP_NODE_BYTES * 2 + 1))],
                         ids=["empty", "not-zlib", "not-json", "not-an-object", "inflates-past-the-bound"])
def test_a_group_document_that_is_not_compressed_json_or_inflates_past_the_bound_is_refused(raw):
    with pytest.raises(ValueError):
        collect.read_group_document(raw, 1, range(8, 10))


def test_flat_below_the_threshold_by_groups_above_and_flags_force_either():
    auto = Gather()
    assert auto.group_size(255) is None and auto.group_size(256) == 64
    assert Gather("flat").group_size(10_000) is None and Gather("hierarchical", 7).group_size(3) == 7
    assert gather_plan(None, None) == Gather("auto", 64) and gather_plan("flat", 9) == Gather("flat", 9)
    with pytest.raises(InputError, match="--group-size must be from 2 to 1024"):
        gather_plan("hierarchical", 1)
    with pytest.raises(InputError, match="--group-size must be from 2 to 1024, not 1025"):
        gather_plan("hierarchical", 1025)


def test_gather_flags_outside_collect_or_a_bad_group_size_are_exit_2(tmp_path):
    snap = str(ROOT / "tests" / "fixtures" / "snapshots" / "h100_8x_nvswitch.json")
    r = run_cli(["fleet", snap, snap, "--gather", "flat"])
    assert r.returncode == 2 and "--gather: only with `fleet collect`" in r.stderr
    r = run_cli(["fleet", "collect", "--nnodes", "2", "--node-rank", "1", "--rdzv-endpoint", "127.0.0.1:1",
                 "--group-size", "1"])
    assert r.returncode == 2 and "--group-size must be from 2 to 1024" in r.stderr


def test_collect_by_groups_from_the_command_line_rank_0_s_choice_is_every_node_s(tmp_path):
    from tests.fleet.conftest import collect_argv, free_port, node_snapshot, run_nodes

    def named(i):
        def edit(d):
            d["host"]["hostname"] = f"node-{i}"
            if i == 3:
                d["torch"]["version"] = "2.4.1+cu121"
        return edit

    port = free_port()
    snaps = [node_snapshot(tmp_path, f"n{i}", named(i)) for i in range(4)]
    # only rank 0 asks for groups of 2; the others follow the layout it posts
    argvs = [collect_argv(4, i, port, snaps[i], "--json", *(["--gather", "hierarchical", "--group-size", "2"]
                                                             if i == 0 else ["--gather", "flat"])) for i in range(4)]
    nodes = run_nodes(argvs)
    doc = json.loads(nodes[0].stdout)
    assert_valid(doc)
    assert doc["collect"]["gather"] == "hierarchical" and doc["collect"]["group_size"] == 2
    assert [n["host"] for n in doc["nodes"]] == ["node-0", "node-1", "node-2", "node-3"]
    assert "torch differs on node-3 (others: 2.5.1+cu124)" in [f["title"] for f in doc["findings"]]
    assert "leading group 1 (ranks 2..3)" in nodes[2].stderr
    assert [n.returncode for n in nodes] == [1, 1, 1, 1]


def _store():
    import datetime

    from torch.distributed import TCPStore

    from tests.fleet.conftest import free_port

    return TCPStore("127.0.0.1", free_port(), 1, True, timeout=datetime.timedelta(seconds=2))


def test_a_leader_posting_after_the_cutoff_leaves_its_members_messages_for_rank_0(messages):
    """Rank 0 may be reading a late group's messages itself (review): a leader that finds the cutoff posted
    after its document keeps them; one that posts before the cutoff deletes them, as rank 0 reads its document."""
    from envdoctor.fleet.endpoint import Rendezvous

    for cutoff, kept in ((True, True), (False, False)):
        store = _store()
        for r in (8, 9, 10):
            store.set(collect.node_key(r, 8), messages[r])
        if cutoff:
            store.set("cutoff", "1")
        collect._lead_group(store, Rendezvous(11, 8, "127.0.0.1", 1), 8, 1.0, lambda _t: None)
        assert store.check(["group/1"])
        assert bool(store.check([collect.node_key(9, 8)])) is kept


def test_a_missing_key_in_multi_get_is_not_taken_for_a_store_without_multi_get():
    class Store:
        def __init__(self, error):
            self.error, self.gets = error, 0

        def multi_get(self, keys):
            raise self.error

        def get(self, key):
            self.gets += 1
            return b"x"

    slow = Store(RuntimeError("Wait timeout after 2000 ms for keys: node/3"))
    with pytest.raises(RuntimeError, match="Wait timeout"):
        collect._get_all(slow, ["node/3"])
    assert slow.gets == 0  # not one wait per key on top of it
    old = Store(RuntimeError("multi_get is not implemented for this store"))
    assert collect._get_all(old, ["a", "b"]) == [b"x", b"x"] and old.gets == 2
