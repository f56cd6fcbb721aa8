"""While a probe runs, the Overview says its facts are being probed (issue 31): "torch: probing…", not
"torch unknown (not probed)". A running probe's section is an unknown like any other to the rules."""

from __future__ import annotations

from envdoctor.present.facts import PROBING, fact_groups
from envdoctor.probes.runner import PROBES, assemble
from envdoctor.snapshot import is_unknown
from envdoctor.tui.app import probing


def _facts(snap):
    return {label: value for _title, items in fact_groups(snap) for label, value in items}


def test_a_running_torch_probe_reads_probing_and_a_finished_one_does_not():
    done = [s for s in PROBES if s.name != "torch"]
    snap = probing(assemble([], []), [s for s in PROBES if s.name == "torch"])
    assert _facts(snap)["torch"] == "probing…"
    assert is_unknown(snap.torch) and snap.torch == PROBING and snap.deepspeed == PROBING
    assert "not probed" not in _facts(snap)["torch"]
    assert snap.host != PROBING and done  # the other probes' sections are not touched
