"""The multi-node self-test checks the rendezvous host before launching (issue 16, point 3)."""

from __future__ import annotations

import json
import signal
import socket

import pytest

from envdoctor.cli import main
from tests.json_schemas import assert_valid


@pytest.fixture
def keep_sigterm():
    before = signal.getsignal(signal.SIGTERM)
    yield
    signal.signal(signal.SIGTERM, before)


@pytest.mark.slow
def test_unresolvable_endpoint_fails_at_once_with_the_dns_finding_first(monkeypatch, capsys, keep_sigterm):
    looked_up = []

    def no_such_host(host, *a, **k):
        looked_up.append(host)
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", no_such_host)
    launched = []
    monkeypatch.setattr("envdoctor.selftest.allreduce.run_allreduce", lambda *a, **k: launched.append(a))
    code = main(["selftest", "allreduce", "--nnodes", "2", "--node-rank", "1", "--backend", "gloo",
                 "--rdzv-endpoint", "head-node:29500", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert_valid(doc)
    [test] = doc["tests"]
    assert code == 1 and test["status"] == "failed" and launched == [] and looked_up == ["head-node"]
    assert "'head-node' does not resolve" in test["error"]
    first = test["findings"][0]
    assert first["category"] == "hostname_unresolvable" and first["subjects"] == ["head-node"]
    assert "firewall_blocked" not in {f["category"] for f in test["findings"]}


@pytest.mark.slow
def test_a_resolvable_endpoint_launches_and_a_silent_port_is_only_said(monkeypatch):
    from envdoctor.selftest.common import Target
    from envdoctor.selftest.result import TestResult
    from envdoctor.selftest.runner import SelftestOptions, run_test

    launched, said = [], []

    def fake_run(target, opts, **kwargs):
        launched.append(opts.rdzv_endpoint)
        return TestResult("allreduce", "passed", 0.1, {}, None, [])

    monkeypatch.setattr("envdoctor.selftest.allreduce.run_allreduce", fake_run)
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    options = SelftestOptions(nnodes=2, node_rank=1, backend="gloo", rdzv_endpoint=f"127.0.0.1:{port}")
    target = Target(python="python", torch="2.13.0", gloo=True)
    result = run_test("allreduce", options, target, lambda: None, said.append)
    assert result.status == "passed" and launched == [f"127.0.0.1:{port}"]
    assert any("does not answer yet" in line for line in said)
