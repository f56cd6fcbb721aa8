"""The suite's fast loop (`python -m pytest -m "not slow"`) stays fast without losing what it checks: the tests
diagnose with one loaded Knowledge, and the slow tests are marked (issue 31)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from envdoctor import knowledge
from envdoctor.snapshot import load_snapshot
from envdoctor.wheels import index as wheel_index
from tests.conftest import ROOT, all_fixture_names, bundled_knowledge, diagnose_bundled, fixture_path
from tests.rules import test_unknowns


def test_the_tests_diagnose_with_one_loaded_knowledge(monkeypatch: pytest.MonkeyPatch) -> None:
    first = bundled_knowledge()

    def no_reload(*_a, **_k):
        raise AssertionError("the data files were read and validated again")

    monkeypatch.setattr(knowledge, "knowledge_from", no_reload)
    monkeypatch.setattr(wheel_index, "read_index", no_reload)
    assert bundled_knowledge() is first
    for name in ("h200_8x_healthy", "cpu_only_this_machine"):
        diagnose_bundled(load_snapshot(fixture_path(name)))


def test_the_fast_loop_runs_the_unknowns_tests_on_real_fixtures() -> None:
    names = all_fixture_names()
    assert set(test_unknowns.FAST) <= set(names)
    fast = [p for p in test_unknowns.EVERY_LEAF if isinstance(p, str)]
    slow = [p for p in test_unknowns.EVERY_LEAF if not isinstance(p, str)]
    assert sorted(fast) == sorted(test_unknowns.FAST)
    assert all(m.name == "slow" for p in slow for m in p.marks)
    assert sorted(fast + [p.values[0] for p in slow]) == names  # the full suite still covers every fixture


def test_the_tests_that_start_real_torch_processes_are_slow() -> None:
    import tests.probes.test_torch_ecosystem as eco
    import tests.probes.test_torch_probe as probe
    import tests.selftest.test_selftest_interrupt as interrupt
    import tests.tui.test_selftest_pane as pane

    def slow(fn) -> bool:
        return any(m.name == "slow" for m in getattr(fn, "pytestmark", []))

    assert slow(probe.test_real_cpu_torch_is_seen_through_the_child)
    assert slow(probe.test_the_child_says_the_same_with_and_without_fork)
    assert slow(eco.test_real_torch_ecosystem_facts)
    assert slow(eco.test_extension_import_error_and_build_record_reach_the_snapshot)
    assert slow(pane.test_run_gpu_then_allreduce_keeps_rows_and_draws_busbw_live)
    assert interrupt.pytestmark.name == "slow"


def test_the_tests_that_build_real_environments_are_slow() -> None:
    import tests.install.test_full_disk as full_disk
    import tests.install.test_unlucky as unlucky

    assert unlucky.pytestmark.name == "slow" and full_disk.pytestmark.name == "slow"


def test_the_hung_writer_test_shortens_the_idle_deadline_nccl_diagnose_reads():
    from tests.test_bounded_read import SHORT_IDLE

    code = SHORT_IDLE + "; import io; from envdoctor.nccl import diagnose; print(diagnose.idle_reader(io.BytesIO()).idle_s)"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert res.stdout.strip() == "0.5", res.stderr  # not a minute's wait


def _slow(fn) -> bool:
    return any(m.name == "slow" for m in getattr(fn, "pytestmark", []))


def test_the_tests_that_wait_on_real_deadlines_install_into_venvs_or_drive_long_app_sessions_are_slow() -> None:
    import tests.fleet.test_fleet_collect as fleet
    import tests.install.test_provisioning_doc as provisioning
    import tests.test_hermetic as hermetic
    import tests.test_install as install
    import tests.test_processes as processes
    import tests.tui.test_fix_apply as fix_apply
    import tests.tui.test_keys as keys

    assert _slow(processes.test_the_deadline_kills_grandchildren_in_other_groups_and_sessions)
    assert _slow(processes.test_a_grace_period_lets_the_command_clean_up_on_sigterm)
    assert _slow(fleet.test_bandwidth_names_the_slowed_node)
    assert _slow(fleet.test_a_node_that_never_arrives_is_named_after_the_timeout)
    assert _slow(install.test_clean_install_then_undo) and _slow(install.test_interrupted_install_rolls_back)
    assert all(_slow(t) for t in (provisioning.test_dockerfile_recipe, provisioning.test_cloud_init_recipe,
                                  provisioning.test_ci_job_recipe))
    assert _slow(hermetic.test_a_users_cache_and_settings_do_not_reach_the_tests)
    assert _slow(fix_apply.test_apply_asks_first_and_cancel_changes_nothing)
    assert _slow(keys.test_tab_keys_work_from_every_widget_that_is_not_a_text_input)
    assert _slow(keys.test_after_clicking_a_finding_every_tab_key_still_works)


@pytest.mark.parametrize("args", [
    ["check", "--snapshot", str(fixture_path("rtx5090_old_torch")), "--json"],
    ["report", "--markdown", "--snapshot", str(fixture_path("h100_8x_nvswitch"))],
    ["nccl", "diagnose", str(ROOT / "tests" / "fixtures" / "nccl" / "shm_exhausted.log")],
    ["check", "--no-such-flag"],
], ids=["check-json", "report", "nccl", "bad-flag"])
def test_a_command_run_in_process_says_what_it_says_in_its_own_process(args):
    import signal

    from tests.conftest import run_cli, run_cli_in_process

    before = dict(os.environ), sys.stdout, signal.getsignal(signal.SIGTERM)
    inside, outside = run_cli_in_process(args), run_cli(args)
    assert (inside.returncode, inside.stdout, inside.stderr) == (outside.returncode, outside.stdout, outside.stderr)
    assert (dict(os.environ), sys.stdout, signal.getsignal(signal.SIGTERM)) == before


def test_the_per_fixture_sweeps_run_a_subset_in_the_fast_loop_and_every_fixture_in_ci() -> None:
    import tests.rules.test_ecosystem_rules as eco
    import tests.rules.test_partial_lists as partial
    from tests.conftest import fast_subset

    for test, names in ((partial.test_no_rule_reads_a_package_a_partial_list_lacks_as_not_installed, all_fixture_names()),
                        (eco.test_turning_one_fact_unknown_never_adds_an_ecosystem_finding, eco.ECO_FIXTURES)):
        [params] = [m.args[1] for m in test.pytestmark if m.name == "parametrize"]
        fast = [p for p in params if isinstance(p, str)]
        slow = [p for p in params if not isinstance(p, str)]
        assert fast and slow and all(m.name == "slow" for p in slow for m in p.marks)
        assert sorted(fast + [p.values[0] for p in slow]) == sorted(names)
    with pytest.raises(AssertionError):
        fast_subset(["a", "b"], ["c"])  # a fast name that is not a fixture would leave the fast loop empty
