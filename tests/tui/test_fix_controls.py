"""The Fix tab's controls say what the plan holds (issue 31): the DeepSpeed box is empty until ticked and ticking it
re-plans with DeepSpeed, as `fix --deepspeed`; the Index base box is `fix --index-base` (checked the same way, its
errors naming the box); an unreachable PyTorch index is said in the plan as `fix --dry-run` says it, and a failed
Apply names the box, not a flag the TUI has no control for."""

from __future__ import annotations

import dataclasses
import os
import socket

import pytest
from textual.widgets import Checkbox, Input, Static

from envdoctor.tui.app import make_app
from envdoctor.tui.fix_pane import INDEX_BASE_BOX, FixPane
from envdoctor.tui.modals import ConfirmScreen
from envdoctor.usecases.plan_fix import report_installs
from tests.test_install import freeze
from tests.tui.conftest import aio, recorded, screen_lines, settle, text_of, until
from tests.tui.test_fix_apply import use_site_env

pytestmark = pytest.mark.slow  # each starts the app (seconds on a loaded machine)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed with the socket: nothing listens there


async def _open_fix(pilot, app) -> FixPane:
    await settle(pilot, app)
    await pilot.press("x")
    await settle(pilot, app)
    return app.query_one(FixPane)


def _box_row(app) -> str:
    return next(line for line in screen_lines(app) if "DeepSpeed" in line)


@aio
async def test_the_deepspeed_box_is_empty_until_ticked_and_ticking_it_plans_deepspeed():
    app = make_app(recorded("rtx5090_old_torch"))
    async with app.run_test(size=(120, 40)) as pilot:
        fix = await _open_fix(pilot, app)
        box = app.query_one("#want-deepspeed", Checkbox)
        assert box.value is False and "▐ ▌ DeepSpeed" in _box_row(app)
        assert [p.name for p in fix.plan.packages] == ["torch"]
        assert "deepspeed" not in text_of(app.query_one("#plan-text", Static)).lower()

        await pilot.click("#want-deepspeed")  # no Plan press: the tick itself re-plans
        await settle(pilot, app)
        assert box.value is True and "▐X▌ DeepSpeed" in _box_row(app)
        assert [p.name for p in fix.plan.packages] == ["torch", "deepspeed"]
        deepspeed = fix.plan.packages[1].pin
        assert f"install {deepspeed}" in text_of(app.query_one("#plan-text", Static))

        await pilot.click("#want-deepspeed")
        await settle(pilot, app)
        assert box.value is False and [p.name for p in fix.plan.packages] == ["torch"]


@aio
async def test_the_deepspeed_wish_the_app_is_given_ticks_the_box_and_is_in_the_plan():
    app = make_app(recorded("rtx5090_old_torch"), deepspeed="")
    async with app.run_test(size=(120, 40)) as pilot:
        fix = await _open_fix(pilot, app)
        assert app.query_one("#want-deepspeed", Checkbox).value is True and "▐X▌ DeepSpeed" in _box_row(app)
        assert "deepspeed" in [p.name for p in fix.plan.packages]


@aio
async def test_the_index_base_box_is_fix_index_base():
    app = make_app(recorded("rtx5090_old_torch"), index_base="https://given.example/whl")
    async with app.run_test(size=(120, 40)) as pilot:
        fix = await _open_fix(pilot, app)
        box = app.query_one("#index-base", Input)
        assert box.value == "https://given.example/whl"
        assert fix.plan.torch.index_url.startswith("https://given.example/whl/")

        box.value = "https://mirror.example/pytorch"
        await pilot.click("#index-base")
        await pilot.press("enter")
        await settle(pilot, app)
        assert fix.plan.torch.index_url.startswith("https://mirror.example/pytorch/")
        assert "from https://mirror.example/pytorch/" in text_of(app.query_one("#plan-text", Static))

        box.value = "ftp://mirror.example/whl"
        await pilot.click("#plan-button")
        await settle(pilot, app)
        shown = text_of(app.query_one("#plan-text", Static))
        assert shown.startswith("Cannot plan: Index base 'ftp://mirror.example/whl': only http://, https:// or "
                                "file:// index URLs are allowed")


@aio
async def test_an_unreachable_index_is_in_the_plan_and_a_failed_apply_names_the_box(site, monkeypatch):
    use_site_env(monkeypatch, site)
    base = f"http://127.0.0.1:{_closed_port()}/whl"
    before = freeze(site)
    app = make_app(recorded("cpu_only_this_machine"), fix_python=site.python, index_base=base, torch="2.14.1")
    async with app.run_test(size=(120, 40)) as pilot:
        fix = await _open_fix(pilot, app)
        assert fix.plan.status == "planned"
        # the value `fix --dry-run` notes for the same plan (its install report stops at the unreachable index)
        said = report_installs(dataclasses.replace(app.plan_result, install_notes=[]), os.environ, None).install_notes
        assert app.plan_result.install_notes == said and said[0].startswith(f"cannot reach the PyTorch index {base}/cpu/torch/")
        shown = " ".join(text_of(app.query_one("#plan-text", Static)).split())
        assert f"cannot reach the PyTorch index {base}/cpu/torch/" in shown
        assert f"point ENVDOCTOR_TORCH_INDEX or {INDEX_BASE_BOX} at a reachable index" in shown
        assert "--index-base" not in shown

        await pilot.click("#apply-button")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.click("#yes")
        await pilot.pause()
        await until(pilot, lambda: not fix.installing, timeout=240)
        await settle(pilot, app)
        outcome = " ".join(text_of(app.query_one("#outcome", Static)).split())
        assert outcome.startswith(f"Failed, rolled back: cannot reach the PyTorch index {base}/cpu/torch/")
        assert f"or {INDEX_BASE_BOX} at a reachable index" in outcome and "nothing was changed" in outcome
        assert "--index-base" not in outcome
    assert freeze(site) == before
