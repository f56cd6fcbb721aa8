"""The hostile and unlucky inputs the tests try, counted by outcome, from the tests' own parametrization.

    python bench/hostile_tally.py           # collect only: what is tried
    python bench/hostile_tally.py --run     # run those tests too: how many held
    python bench/hostile_tally.py --json    # the same as a JSON document

A test marked `@pytest.mark.hostile("exit 2", "handled")` tries two inputs per collected case (each
parametrized case counts), with those outcomes. Tests in files other parts of envdoctor own are listed
in OTHERS with their outcomes instead of a marker.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

ROOT = Path(__file__).resolve().parents[1]

OUTCOMES = {
    "exit 2": "a clear one-line error (exit 2), nothing changed",
    "refused": "refused with the reason (exit 3: busy, interrupted, damaged backup), nothing changed",
    "rolled back": "the change was rolled back or undone: the environment as before (pip freeze --all identical)",
    "handled": "the right result: secret removed, escape shown, written through, killed, diagnosed, repaired",
}

# file::function -> outcomes, for tests whose files other parts own (no marker there).
OTHERS: Dict[str, Tuple[str, ...]] = {
    "tests/test_install.py::test_verification_failure_rolls_back": ("rolled back",),
    "tests/test_install.py::test_bad_hash_changes_nothing": ("rolled back",),
    "tests/test_install.py::test_truncated_wheel_rolls_back": ("rolled back",),
    "tests/test_install.py::test_server_dying_mid_transfer": ("rolled back",),
    "tests/test_install.py::test_interrupted_install_rolls_back": ("rolled back",),
    "tests/test_install.py::test_kill_9_of_envdoctor_takes_pip_down_with_it": ("handled",),
    "tests/test_install.py::test_a_silent_installer_step_times_out_and_is_killed": ("handled",),
    "tests/test_install.py::test_only_http_or_file_index_urls": ("exit 2",),
    "tests/test_pep668.py::test_fix_refuses_an_externally_managed_environment": ("exit 2",),
    "tests/nccl/test_nccl_inputs.py::test_a_real_shm_failure_written_as_utf16_or_with_a_bom_is_diagnosed": ("handled",),
    "tests/nccl/test_nccl_inputs.py::test_binary_garbage_is_not_taken_for_utf16": ("handled",),
    "tests/nccl/test_nccl_inputs.py::test_1500_rank_logs_under_an_open_file_limit_of_1024": ("handled",),
    "tests/nccl/test_nccl_inputs.py::test_a_fifo_without_a_writer_reads_as_empty_instead_of_blocking": ("handled",),
    "tests/nccl/test_nccl_inputs.py::test_devices_are_refused_with_exit_2": ("exit 2",),
}
FILES = sorted({k.split("::")[0] for k in OTHERS} | {
    "tests/test_hostile_inputs.py", "tests/test_redact.py", "tests/install", "tests/selftest/test_selftest_interrupt.py"})


class Tally:
    """A pytest plugin: keeps the hostile tests, records each one's outcomes and, when run, its result."""

    def __init__(self) -> None:
        self.items: Dict[str, Tuple[str, ...]] = {}
        self.results: Dict[str, str] = {}

    def pytest_collection_modifyitems(self, config: pytest.Config, items: List[pytest.Item]) -> None:
        keep, drop = [], []
        for item in items:
            marker = item.get_closest_marker("hostile")
            outcomes = tuple(marker.args) if marker else OTHERS.get(item.nodeid.split("[")[0], ())
            unknown = set(outcomes) - set(OUTCOMES)
            if unknown:
                raise pytest.UsageError(f"{item.nodeid}: unknown outcome(s) {sorted(unknown)}")
            if outcomes:
                self.items[item.nodeid] = outcomes
                keep.append(item)
            else:
                drop.append(item)
        missing = set(OTHERS) - {nodeid.split("[")[0] for nodeid in self.items}
        if missing:
            raise pytest.UsageError(f"OTHERS names tests that do not exist (renamed?): {sorted(missing)}")
        config.hook.pytest_deselected(items=drop)
        items[:] = keep

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.failed or report.skipped or report.when == "call":
            self.results.setdefault(report.nodeid, report.outcome)

    def table(self) -> Dict[str, Dict[str, int]]:
        out: Dict[str, Dict[str, int]] = {}
        for outcome in OUTCOMES:
            row: Counter = Counter()
            for nodeid, outcomes in self.items.items():
                n = outcomes.count(outcome)
                if n:
                    row["tried"] += n
                    if nodeid in self.results:
                        row[self.results[nodeid]] += n
            out[outcome] = dict(row)
        return out


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", action="store_true", help="run the tests, not just collect them")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    tally = Tally()
    opts = ["-q", "-p", "no:cacheprovider", "--rootdir", str(ROOT)] + ([] if args.run else ["--collect-only"])
    with contextlib.redirect_stdout(sys.stderr):  # pytest's own lines; the tally is stdout
        code = pytest.main(opts + [str(ROOT / f) for f in FILES], plugins=[tally])
    table = tally.table()
    total = {"tests": len(tally.items), "inputs": sum(r.get("tried", 0) for r in table.values())}
    if args.json:
        print(json.dumps({"outcomes": table, "total": total, "meaning": OUTCOMES}, indent=1))
    else:
        print(f"\n{total['inputs']} hostile inputs in {total['tests']} test cases")
        for outcome, row in table.items():
            ran = ", ".join(f"{k} {v}" for k, v in sorted(row.items()) if k != "tried")
            print(f"  {outcome:<12} {row.get('tried', 0):>4}" + (f"  ({ran})" if ran else "") + f"  {OUTCOMES[outcome]}")
    return int(code) if args.run else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
