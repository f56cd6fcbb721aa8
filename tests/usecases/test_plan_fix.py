"""The plan-a-fix use case: wheel index -> torch index base -> wishes -> plan -> commands, for a snapshot taken
elsewhere or retargeted to another machine's GPUs; the envdoctor.plan/1 document."""

from __future__ import annotations

import socket
import sys
from dataclasses import replace

import pytest

from envdoctor.errors import InputError
from envdoctor.install.preview import attach_commands
from envdoctor.install.resolve import UNREACHABLE_WAY_OUT
from envdoctor.usecases.plan_fix import (
    TARGET_NOTE,
    FixSetup,
    FixWishes,
    check_torch_index,
    other_machine,
    plan_fix,
    report_installs,
    torch_index_base,
)
from envdoctor.wheels.index import load_index
from envdoctor.wheels.planner import plan
from envdoctor.wheels.wishes import Wishes
from tests.json_schemas import assert_valid

OFFICIAL = "https://download.pytorch.org/whl"


def setup_for(tmp_path, torch_index=None) -> FixSetup:
    return FixSetup(wheel_index=load_index, state_root=tmp_path / "state",
                    writable_state_root=lambda: tmp_path / "state", use_uv=False, torch_index=torch_index)


def test_a_snapshot_from_elsewhere_gets_the_plan_and_commands_of_the_pipeline(snapshot_of, tmp_path):
    snap = snapshot_of("rtx5090_old_torch")
    result = plan_fix(snap, setup_for(tmp_path), FixWishes(torch="2.9"), None)
    index = load_index()
    expected = plan(snap, index, Wishes.from_options("2.9", None, None, torch_index_base(None, None,
                                                                                         index.default_index_base)))
    attach_commands(expected, snap, None, tmp_path / "state", False)
    assert result.to_json() == expected.to_json()
    assert result.status == "planned" and result.plan.torch.pin.startswith("torch==2.9")
    assert result.plan.commands and result.python is None and result.exit_code() == 0
    assert_valid(result.to_json())


def test_the_python_version_wish_plans_for_that_python(snapshot_of, tmp_path):
    result = plan_fix(snapshot_of("rtx5090_old_torch"), setup_for(tmp_path), FixWishes(python_version="3.12"), None)
    assert result.plan.python.startswith("3.12")


def test_a_target_is_planned_for_its_gpus_and_said_in_the_document(snapshot_of, tmp_path):
    target = other_machine(gpu="12.0", driver="570.133.07", count=2, name="RTX 5090")
    result = plan_fix(snapshot_of("cpu_only_this_machine"), setup_for(tmp_path), FixWishes(), None, target)
    assert [str(g.compute_capability) for g in result.snapshot.gpus] == ["12.0", "12.0"]
    doc = result.to_json()
    assert doc["target"] == target.to_json() and doc["notes"][-1] == TARGET_NOTE
    assert result.to_json() == doc  # the document does not grow each time it is asked for
    assert TARGET_NOTE not in result.plan.notes
    assert_valid(doc)


def test_other_machine_from_a_snapshot_or_nothing(snapshot_of):
    snap = snapshot_of("h100_8x_nvswitch")
    target = other_machine(snap, "h100.json")
    assert target.source == "h100.json" and len(target.gpus) == 8
    assert other_machine() is None
    with pytest.raises(InputError, match="--driver"):
        other_machine(gpu="9.0")


def test_the_index_base_is_the_option_then_the_setting_then_the_index_default(snapshot_of, tmp_path):
    assert torch_index_base("https://opt.example/whl", "https://env.example/whl", OFFICIAL) == "https://opt.example/whl"
    assert torch_index_base(None, "https://env.example/whl", OFFICIAL) == "https://env.example/whl"
    assert torch_index_base(None, None, OFFICIAL + "/") == OFFICIAL
    with pytest.raises(InputError, match="ENVDOCTOR_TORCH_INDEX"):
        torch_index_base(None, "ftp://x/whl", OFFICIAL)
    mirror = plan_fix(snapshot_of("rtx5090_old_torch"), setup_for(tmp_path, "https://mirror.example/whl"),
                      FixWishes(), None)
    assert mirror.index_base == "https://mirror.example/whl"
    assert all(p.index_url.startswith("https://mirror.example/whl") for p in mirror.plan.packages if p.index_url)


def test_the_index_base_errors_name_the_control_it_came_from(snapshot_of, tmp_path):
    with pytest.raises(InputError, match=r"^--index-base 'ftp://x/whl': only http"):
        plan_fix(snapshot_of("rtx5090_old_torch"), setup_for(tmp_path), FixWishes(index_base="ftp://x/whl"), None)
    with pytest.raises(InputError, match=r"^Index base 'ftp://x/whl': only http"):
        plan_fix(snapshot_of("rtx5090_old_torch"), setup_for(tmp_path),
                 FixWishes(index_base="ftp://x/whl", index_base_name="Index base"), None)


@pytest.mark.slow  # runs the interpreter and pip's configuration (seconds)
def test_an_unreachable_torch_index_is_the_note_the_install_report_gives(snapshot_of, tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        base = f"http://127.0.0.1:{s.getsockname()[1]}/whl"  # nothing listens there once the socket is closed
    planned = plan_fix(snapshot_of("cpu_only_this_machine"), setup_for(tmp_path), FixWishes("2.14.1", index_base=base),
                       sys.executable)
    assert planned.status == "planned" and planned.install_notes == []
    noted = check_torch_index(planned)
    [note] = noted.install_notes
    assert note.startswith(f"cannot reach the PyTorch index {base}/cpu/torch/ (") and note.endswith(UNREACHABLE_WAY_OUT)
    assert report_installs(planned, {}, None).install_notes == [note]  # what `fix --dry-run` prints
    elsewhere = replace(planned, python=None)  # a snapshot from elsewhere installs nothing here: nothing to check
    assert check_torch_index(elsewhere) is elsewhere


def test_a_bad_wish_is_bad_input(snapshot_of, tmp_path):
    with pytest.raises(InputError, match="--torch"):
        plan_fix(snapshot_of("rtx5090_old_torch"), setup_for(tmp_path), FixWishes(torch="not a version"), None)


def test_the_install_report_needs_an_interpreter_here(snapshot_of, tmp_path):
    result = plan_fix(snapshot_of("rtx5090_old_torch"), setup_for(tmp_path), FixWishes(), None)
    assert report_installs(result, {}, None) is result
    assert "installs" not in result.to_json()


def test_an_impossible_plan_exits_1(snapshot_of, tmp_path):
    result = plan_fix(snapshot_of("rtx5090_old_torch"), setup_for(tmp_path), FixWishes(torch="==1.0.0"), None)
    assert result.status == "impossible" and result.exit_code() == 1
