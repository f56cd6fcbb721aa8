"""fleet collect against hostile peers (issue 30 item 9) and its -o file (item 6): a node that sends bad JSON,
another type, a 5,000-digit number or a clock answer that is not a number is reported as a bad node and the
others are collected; no NaN or Infinity reaches the document; a row of the wrong shape is refused. Rank 0 and
15 nodes run in this process (bench/fleet_sim.py: store clients in threads against one TCPStore)."""

from __future__ import annotations

import importlib.util
import json
import math
import sys

import pytest

from envdoctor.fleet.collect import peer_clock, peer_payload, peer_row
from envdoctor.settings import Settings
from envdoctor.usecases.fleet import diagnose_collected
from tests.conftest import ROOT, fixture_path

pytest.importorskip("torch.distributed")
KNOW = Settings.from_env({}).knowledge()


def _sim():
    spec = importlib.util.spec_from_file_location("fleet_sim", ROOT / "bench" / "fleet_sim.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["fleet_sim"] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("raw", [b"{not json", b"[]", b"1", b"9" * 5000, b'{"hostname": ["x"]}', b"\xff\xfe"])
def test_a_peer_payload_that_is_not_a_node_is_refused_with_why(raw):
    with pytest.raises(ValueError):
        peer_payload(raw)


@pytest.mark.parametrize("raw", [b"abc", b"nan", b"inf", b"-Infinity", b"1" * 100])
def test_a_clock_answer_that_is_not_a_finite_number_is_refused(raw):
    with pytest.raises(ValueError):
        peer_clock(raw)


def test_bandwidth_rows_of_the_wrong_shape_or_values_are_refused():
    assert peer_row(["x", {}], 2) is None
    assert peer_row([1.0] * 8, 2) is None  # eight values are not a row of a 2 x 2 matrix
    assert peer_row([None, float("nan")], 2) is None and peer_row([None, float("inf")], 2) is None
    assert peer_row([None, -1.0], 2) is None and peer_row([None, True], 2) is None
    assert peer_row([None, 3], 2) == [None, 3.0]


def _payloads():
    good = json.loads(fixture_path("h100_8x_nvswitch").read_text())

    def payload_of(r):
        return {"hostname": f"node{r:02d}", "file": "", "snapshot": dict(good, host=dict(good["host"], hostname=f"node{r:02d}"))}
    return payload_of


def test_hostile_peers_are_bad_nodes_and_the_rest_is_collected():
    sim = _sim()
    hostile = {3: sim.Hostile(payload=b"{not json"), 5: sim.Hostile(payload=b"[]"), 7: sim.Hostile(payload=b"1"),
               9: sim.Hostile(payload=b"9" * 5000), 11: sim.Hostile(clock=b"abc"), 13: sim.Hostile(clock=b"nan")}
    out = sim.simulate(16, _payloads(), lambda got: diagnose_collected(got, KNOW), hostile, timeout=60)
    assert out.code == 0, out.follower_codes
    got = out.collected
    assert sorted(got.bad) == sorted(hostile)
    assert set(got.payloads) == set(range(16)) - {3, 5, 7, 9}
    assert set(got.clocks) == set(range(1, 16)) - {11, 13}  # a node that sent a bad snapshot still has a clock
    result = out.decided
    doc = result.to_json()
    text = json.dumps(doc)
    assert "NaN" not in text and "Infinity" not in text
    json.loads(text, parse_constant=lambda c: pytest.fail(f"bare {c} in the document"))
    bad = [f for f in result.findings if f.id == "ED905"]
    assert len(bad) == len(hostile) and result.exit_code() == 1
    assert {n["rank"] for n in doc["nodes"] if "problem" in n} == set(hostile)
    assert all(n["arrived"] for n in doc["nodes"])
    assert all(math.isfinite(n.get("clock_offset_s", 0)) for n in doc["nodes"])


@pytest.fixture
def keep_sigterm_handler():
    """main() turns SIGTERM into KeyboardInterrupt for its run; put pytest's handler back afterwards."""
    import signal

    before = signal.getsignal(signal.SIGTERM)
    yield
    signal.signal(signal.SIGTERM, before)


def test_collect_output_file_is_scrubbed_as_stdout_is(tmp_path, capsys, keep_sigterm_handler):
    """A peer's host name carrying credentials never reaches the -o file (issue 30 item 6)."""
    import threading

    from envdoctor.cli import main
    from envdoctor.fleet import collect
    from envdoctor.fleet.endpoint import Rendezvous

    sim = _sim()
    port = sim.free_port()
    secret = "hunter2secret"
    payload = _payloads()(1)
    payload["hostname"] = f"https://deploy:{secret}@node01.example"
    follower = threading.Thread(target=lambda: collect.run(Rendezvous(2, 1, "127.0.0.1", port), lambda: payload, 60,
                                                           None, lambda _g: 0, lambda _t: None), daemon=True)
    out = tmp_path / "fleet.json"
    follower.start()
    code = main(["fleet", "collect", "--nnodes", "2", "--node-rank", "0", "--rdzv-endpoint", f"127.0.0.1:{port}",
                 "--snapshot", str(fixture_path("h100_8x_nvswitch")), "--timeout", "60", "-o", str(out), "--json"])
    follower.join(30)
    assert code in (0, 1)
    stdout = capsys.readouterr().out
    written = out.read_text()
    assert secret not in stdout and secret not in written
    assert json.loads(written)["nodes"][1]["rank"] == 1


def test_clock_readings_give_the_offset_within_the_bound_and_refuse_junk():
    from envdoctor.fleet.collect import peer_readings

    # the node's clock is 2 s ahead; it read rank 0's value (0.004 s old at most) between its 102.000 and 102.010
    r = peer_readings(json.dumps([[102.0, 100.0, 102.01], [102.1, 100.09, 102.102]]).encode(), 0.004)
    assert r.bound_s == round((0.002 + 0.004) / 2, 4) and abs(r.offset_s - 2.0) <= r.bound_s + 0.01
    for junk in (b"[]", b"abc", json.dumps([[1, "nan", 2]]).encode(), json.dumps([[2.0, 1.0, 1.0]]).encode(),
                 json.dumps([[1, 2, 3]] * 4).encode(), b'[[1e999, 1, 2]]'):
        with pytest.raises(ValueError):
            peer_readings(junk, 0.01)
