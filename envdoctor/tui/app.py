"""The envdoctor app: `make_app(...)` builds it from data; `run_tui()` is what `envdoctor` runs in a terminal.

The app is the only controller: it runs the probes and the use cases (check, plan and apply a fix, self-tests,
the diagnosis of a pasted text, fleet) in thread workers, one generic worker for every use case (`run_use_case`), which post
typed messages back; it hands the results down to the panes.
"""

from __future__ import annotations

import dataclasses
import importlib
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, Hashable, Iterable, List, Optional, Sequence, Tuple

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Container
from textual.message import Message
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import ContentSwitcher, Footer, Header
from textual.worker import Worker, WorkerState, get_current_worker

from envdoctor.errors import InputError
from envdoctor.findings import Finding
from envdoctor.probes.base import ProbeContext
from envdoctor.probes.context import probe_context as make_probe_context
from envdoctor.settings import Settings
from envdoctor.tui import messages as msg
from envdoctor.tui.panes import OverviewPane, fix_wishes
from envdoctor.tui.tab_bar import TabBar, TabTitle

if TYPE_CHECKING:  # the snapshot's types load with the probes, after the first frame
    from envdoctor.snapshot import ProbeRecord, Snapshot


@dataclass(frozen=True)
class Tab:
    """One tab: its id, title, key, what it is for (the help screen) and its pane's class ("module:Class", imported
    when the pane is first mounted). A pane's ENTRY (a selector), if it has one, takes the focus when the tab opens."""

    id: str
    title: str
    key: str
    about: str
    pane_class: str

    @property
    def pane(self) -> Callable[..., Widget]:
        module, _, name = self.pane_class.partition(":")
        return getattr(importlib.import_module(module), name)

    @property
    def label(self) -> TabTitle:
        """The tab bar's title, with the tab's key underlined (the footer leaves the tab keys to the tab bar and the
        help screen)."""
        return TabTitle(self.id, self.title, self.key)


TABS = (
    Tab("overview", "Overview", "o", "the machine at a glance, the verdict, each probe's status",
        "envdoctor.tui.panes:OverviewPane"),
    Tab("gpus", "GPUs & topology", "g", "each GPU, the links between them, peer access, NUMA",
        "envdoctor.tui.panes:GpusPane"),
    Tab("findings", "Findings", "f", "what is wrong, most severe first: detail, fix and references",
        "envdoctor.tui.panes:FindingsPane"),
    Tab("fix", "Fix", "x", "the install plan with its reasons; Apply asks first and rolls back on failure",
        "envdoctor.tui.fix_pane:FixPane"),
    Tab("selftest", "Self-tests", "s", "run all-reduce, backward, torch.compile and GPU checks on this machine",
        "envdoctor.tui.selftest_pane:SelftestPane"),
    Tab("diagnose", "Diagnose", "d", "paste or open any failure text (traceback, build log, collect_env, NCCL "
        "log): the cause, its fix and its evidence", "envdoctor.tui.diagnose_pane:DiagnosePane"),
    Tab("fleet", "Fleet", "l", "a fleet report (`envdoctor fleet collect -o FILE`): the odd node, the bandwidth "
        "heat map", "envdoctor.tui.fleet_pane:FleetPane"),
)
def probing(snap: Snapshot, running: Sequence[Any]) -> Snapshot:
    """`snap` with every section the `running` probes provide marked PROBING (shown "probing…", an unknown)."""
    from envdoctor.present.facts import PROBING

    for spec in running:
        for section in spec.provides:
            if section in {f.name for f in dataclasses.fields(snap)}:
                setattr(snap, section, PROBING)
    return snap


NO_VERDICT = 2  # quit before the diagnosis: `check` could not say (CONTRACT: 2 is "could not do it")
TEXTAREA_MAX = 2 << 20  # a file bigger than this is diagnosed (streamed) but not loaded into the editor


class EnvDoctorApp(App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "envdoctor"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]
    # Plain keys are global from every widget but a text input, which takes every printable key (Escape leaves it).
    BINDINGS = [
        Binding("question_mark", "help", "Help", key_display="?", tooltip="this list of keys"),
        Binding("e", "export", "Export", tooltip="export the redacted report (to a file or the clipboard)"),
        Binding("r", "reprobe", "Re-probe", tooltip="probe this machine again"),
        Binding("q", "quit", "Quit", tooltip="quit, with the exit code `envdoctor check` gives"),
        Binding("escape", "leave", "Leave"),
        *(Binding(t.key, f"show_tab('{t.id}')", f"{t.title} tab", show=False) for t in TABS),
    ]

    def __init__(self, snapshot: Optional[Snapshot] = None, probe_context: Optional[ProbeContext] = None,
                 fix_python: Optional[str] = None, index_base: Optional[str] = None, torch: Optional[str] = None,
                 deepspeed: Optional[str] = None, report_path: str = "envdoctor-report.md",
                 settings: Optional[Settings] = None, source: Optional[str] = None) -> None:
        super().__init__()
        self.settings = settings if settings is not None else Settings.from_env(os.environ)
        self.live = snapshot is None
        if probe_context is None and self.live:
            probe_context = make_probe_context(sys.executable, None, self.settings.torch_timeout)
        self.probe_context = probe_context
        self.snapshot: Optional[Snapshot] = snapshot
        self.findings: Optional[List[Finding]] = None
        self.fix_target = fix_python or (self.probe_context.python if self.live and self.probe_context else None)
        self._live_target = self.fix_target  # where Apply installs once this machine is shown again
        self.source = source  # the file the snapshot on show came from (None: this machine, or a snapshot in memory)
        self.index_base = index_base
        self.wishes = (torch, deepspeed)
        self.report_path = report_path
        self.plan: Any = None  # the plan on show (envdoctor.wheels.planner.Plan)
        self.plan_result: Any = None  # ... as its use case returned it (envdoctor.usecases.plan_fix.PlanResult)
        self.check_result: Any = None  # the diagnosis on show (envdoctor.usecases.check.CheckResult)
        self.timings: Dict[str, float] = {"start": time.monotonic()}
        self._probe_results: Dict[str, Tuple[ProbeRecord, Any]] = {}
        # The first tab's pane is composed with the app; the others are mounted one by one after the first frame.
        # What the app hands a pane before it is mounted waits here (by key: a newer value replaces an older one).
        self._panes: Dict[str, Widget] = {}
        self._unmounted: List[Tab] = list(TABS[1:])
        self._waiting: Dict[str, Dict[Hashable, Callable[[Any], None]]] = {}
        self._quitting = False

    # --- layout -------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        yield TabBar([t.label for t in TABS], TABS[0].id, id="tabs")
        with ContentSwitcher(id="tab-content", initial=TABS[0].id):
            for tab in TABS:
                with Container(id=tab.id, classes="tab-pane"):
                    if tab is TABS[0]:
                        yield tab.pane(id=f"{tab.id}-pane")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.call_after_refresh(self._mark, "first_paint")  # before the work queued below for after that frame
        overview = self.query_one(OverviewPane)
        self._panes[TABS[0].id] = overview
        self._on_pane("fix", self._setup_fix)
        self.sub_title = "probing this machine…" if self.live else self._recorded_title()
        overview.source = self.source
        if self.live:
            from envdoctor.probes.runner import PROBE_NAMES

            overview.probe_names = PROBE_NAMES
            overview.unanswered = "running"
            overview.probes = {}
            self.call_after_refresh(self._start_probing)  # paint first: the probes compete for the CPUs
        else:
            overview.probe_names = tuple(p.name for p in self.snapshot.probes)
            overview.probes = {p.name: p for p in self.snapshot.probes}
            self._show_snapshot(self.snapshot)
            self._diagnose(self.snapshot)
            self._plan(self._wishes())
        self.call_after_refresh(self._mount_next_pane)

    def _recorded_title(self) -> str:
        from envdoctor.present.terminal import printable

        taken = f"snapshot taken {self.snapshot.created}" if self.snapshot is not None else "snapshot"
        # the file's name first: a narrow header cuts the end of the title
        return f"{printable(Path(self.source).name)} ({taken})" if self.source else taken

    def _mark(self, what: str) -> None:
        self.timings.setdefault(what, time.monotonic())

    # --- the panes: the first tab's at once, the others after the first frame ------------------

    @property
    def panes_mounted(self) -> bool:
        """Whether every tab's pane is mounted (the first tab's is from the start)."""
        return not self._unmounted

    def _on_pane(self, tab: str, call: Callable[[Any], None], key: Optional[Hashable] = None) -> None:
        """`call(pane)` with the tab's pane: now if it is mounted, else when it is, in the order asked. A later call
        with the same `key` replaces a waiting one (the newest snapshot, findings or plan is the one to show)."""
        pane = self._panes.get(tab)
        if pane is not None:
            call(pane)
        else:
            self._waiting.setdefault(tab, {})[object() if key is None else key] = call

    async def _mount_next_pane(self) -> None:
        """Mount the next tab's pane (one per frame, so keys are answered in between), then hand it what waited."""
        if not self._unmounted:
            return
        holder = self.query_one(f"#tab-content > #{self._unmounted[0].id}", Container)
        if not holder.is_attached:  # the app is closing
            return
        if not holder.is_mounted:  # the switcher's holders may still be on their way: try again next frame
            self.call_after_refresh(self._mount_next_pane)
            return
        tab = self._unmounted.pop(0)
        pane = tab.pane(id=f"{tab.id}-pane")
        await holder.mount(pane)
        self._panes[tab.id] = pane
        for call in self._waiting.pop(tab.id, {}).values():
            call(pane)
        if self._unmounted:
            self.call_after_refresh(self._mount_next_pane)

    def _setup_fix(self, fix: Any) -> None:
        self._aim_fix(fix)
        fix.set_wishes(*self.wishes, self.index_base or "")

    def _aim_fix(self, fix: Any) -> None:
        """Where Apply installs (None: nowhere, a dry run) and the snapshot file the plan is for."""
        fix.target = self.fix_target
        fix.source = self.source

    def _wishes(self) -> msg.PlanRequested:
        """The Fix tab's torch version, index base and DeepSpeed choice (before its pane is mounted: the ones the app
        was given)."""
        fix = self._panes.get("fix")
        if fix is not None:
            return fix.wishes()
        torch, deepspeed = self.wishes
        return msg.PlanRequested.from_controls(torch or "", deepspeed is not None, self.index_base or "")

    def _installing(self) -> bool:
        return bool(getattr(self._panes.get("fix"), "installing", False))

    def _show_snapshot(self, snap: Snapshot) -> None:
        self.query_one(OverviewPane).snapshot = snap
        self._on_pane("gpus", lambda p: setattr(p, "snapshot", snap), key="snapshot")

    # --- the one worker over the use cases -------------------------------------------------------

    def run_use_case(self, call: Callable[[], Any], reply: Callable[[Any, Optional[str]], Optional[Message]], *,
                     group: str, description: str, input_errors: bool = True) -> Worker:
        """Run `call()` (a use case with its arguments) in a thread worker, one at a time per `group` (a newer call
        cancels the older, whose result is dropped), and post `reply(result, None)` (nothing where it is None).
        `input_errors`: an InputError is posted as `reply(None, its text)`; else it is the worker's failure, shown
        as an error screen."""

        def work() -> None:
            worker = get_current_worker()
            try:
                result = call()
            except InputError as exc:
                if not input_errors:
                    raise
                result, error = None, str(exc)
            else:
                error = None
            message = None if worker.is_cancelled else reply(result, error)
            if message is not None:
                self.post_message(message)

        return self.run_worker(work, thread=True, exclusive=True, group=group, exit_on_error=False,
                               description=description)

    @on(msg.UseCaseRequested)
    def _use_case_requested(self, message: msg.UseCaseRequested) -> None:
        use_case, args, tab = message.use_case, message.args, message.tab
        self.run_use_case(lambda: use_case(*args), lambda result, error: msg.UseCaseDone(tab, result, error),
                          group=tab, description=f"{tab} tab")

    @on(msg.UseCaseDone)
    def _use_case_done(self, message: msg.UseCaseDone) -> None:
        self._on_pane(message.tab, lambda p: p.use_case_done(message.result, message.error), key="result")

    # --- probing and diagnosis ----------------------------------------------------------------

    def _start_probing(self) -> None:
        from envdoctor.probes.runner import PROBE_NAMES
        from envdoctor.snapshot import ProbeRecord

        self._probe_results.clear()
        self.query_one(OverviewPane).probes = {n: ProbeRecord(name=n, status="running") for n in PROBE_NAMES}
        self._probe()

    @work(thread=True, exclusive=True, group="probes", exit_on_error=False, description="probing this machine")
    def _probe(self) -> None:
        from envdoctor.probes.runner import ProbingCancelled, run_probes

        worker = get_current_worker()

        def stopping() -> bool:
            return worker.is_cancelled or self._quitting

        def on_event(event: Any) -> None:
            if not stopping():
                self.post_message(msg.ProbeFinished(event))

        try:
            snap = run_probes(self.probe_context, on_event=on_event, cancelled=stopping)
        except ProbingCancelled:
            return
        if not stopping():  # a result of a quitting app's stopped commands is no fact to diagnose
            self.post_message(msg.ProbesDone(snap))

    @on(msg.ProbeFinished)
    def _probe_finished(self, message: msg.ProbeFinished) -> None:
        from envdoctor.probes.runner import PROBES, assemble

        if self.source is not None:  # posted before a snapshot file was opened: this machine is no longer on show
            return

        record = message.event.record
        self._probe_results[record.name] = (record, message.event.output)
        overview = self.query_one(OverviewPane)
        overview.probes = {**overview.probes, record.name: record}
        # What is known so far: the finished probes' sections; the running probes' read "probing…".
        done = [s for s in PROBES if s.name in self._probe_results]
        self._show_snapshot(probing(assemble([self._probe_results[s.name] for s in done], done),
                                    [s for s in PROBES if s.name not in self._probe_results]))

    @on(msg.ProbesDone)
    def _probes_done(self, message: msg.ProbesDone) -> None:
        if self.source is not None:
            return
        self.snapshot = message.snapshot
        overview = self.query_one(OverviewPane)
        overview.probes = {p.name: p for p in message.snapshot.probes}
        self._show_snapshot(message.snapshot)
        self.sub_title = f"this machine, probed {message.snapshot.created}"
        self.call_after_refresh(self._mark, "all_probes_shown")
        self._diagnose(message.snapshot)
        self._plan(self._wishes())

    def _diagnose(self, snap: Snapshot) -> None:
        from envdoctor.usecases.check import check

        aim = self.fix_target if self.fix_target and self.fix_target != sys.executable else None
        self.run_use_case(lambda: check(snap, self.settings.knowledge(), python=aim),
                          lambda result, _error: msg.FindingsReady(result.findings, result),
                          group="diagnose", description="diagnosing", input_errors=False)

    @on(msg.FindingsReady)
    def _findings_ready(self, message: msg.FindingsReady) -> None:
        self.findings = message.findings
        self.check_result = message.result
        self.query_one(OverviewPane).findings = message.findings
        self._on_pane("findings", lambda p: setattr(p, "findings", message.findings), key="findings")
        self.call_after_refresh(self._mark, "findings_shown")

    def action_reprobe(self) -> None:
        if not self.live and self.probe_context is None:
            self.notify("This is a recorded snapshot; run envdoctor on the machine itself to probe it.", severity="warning")
            return
        if self._installing():
            self.notify("An install is running; probe again when it has finished.", severity="warning")
            return
        if not self.live:  # a snapshot was opened in the palette: back to this machine
            self.live, self.source, self.fix_target = True, None, self._live_target
            self.snapshot = None
            self.query_one(OverviewPane).source = None
            self._forget_plan()
            self.refresh_bindings()
        self._forget_findings()
        self.sub_title = "probing this machine…"
        self._start_probing()

    def _forget_findings(self) -> None:
        self.findings = self.check_result = None
        self.query_one(OverviewPane).findings = None
        self._on_pane("findings", lambda p: setattr(p, "findings", None), key="findings")

    def _forget_plan(self) -> None:
        """Another machine is on show: the plan of the one before can be neither shown nor applied."""
        self.plan = self.plan_result = None

        def clear(fix: Any) -> None:
            self._aim_fix(fix)
            fix.notes, fix.plan_error, fix.plan = (), None, None

        self._on_pane("fix", clear, key="plan")

    # --- a snapshot taken elsewhere: `envdoctor --snapshot FILE`, or the palette's Open snapshot ----------

    def action_open_snapshot(self) -> None:
        from envdoctor.tui.modals import OpenSnapshotScreen

        self.push_screen(OpenSnapshotScreen(self.source or ""), self._open_snapshot)

    def _open_snapshot(self, path: Optional[str]) -> None:
        if not path:
            return
        if self._installing() or self._selftests_running():
            self.notify("An install or a self-test is running on this machine; open the snapshot when it has "
                        "finished.", severity="warning")
            return

        def load() -> Any:
            from envdoctor.errors import SnapshotError
            from envdoctor.snapshot import load_snapshot

            try:
                return load_snapshot(path), None
            except SnapshotError as exc:  # what `check --snapshot` says of the file (exit 2 there)
                return None, str(exc)

        self.run_use_case(load, lambda got, _error: msg.SnapshotOpened(path, *got), group="open",
                          description="opening the snapshot", input_errors=False)

    @on(msg.SnapshotOpened)
    def _snapshot_opened(self, message: msg.SnapshotOpened) -> None:
        from envdoctor.present.terminal import for_terminal

        if message.snapshot is None:
            self.notify(for_terminal(message.error or ""), title="Cannot open the snapshot", severity="error",
                        markup=False, timeout=12)
            return
        self.show_recorded(message.snapshot, message.path)

    def show_recorded(self, snap: Snapshot, source: Optional[str]) -> None:
        """Show a snapshot taken elsewhere instead of this machine: every tab, the Fix tab's plan a dry run as
        `fix --snapshot` (nothing can be applied: Apply is refused), `r` back to this machine if it was probed."""
        self.workers.cancel_group(self, "probes")
        self.live, self.source, self.fix_target = False, source, None
        self.snapshot = snap
        self._forget_findings()
        overview = self.query_one(OverviewPane)
        overview.source = source
        overview.probe_names = tuple(p.name for p in snap.probes)
        overview.probes = {p.name: p for p in snap.probes}
        self._show_snapshot(snap)
        self._forget_plan()
        self.sub_title = self._recorded_title()
        self.refresh_bindings()
        self._diagnose(snap)
        self._plan(self._wishes())
        self.notify(f"Showing the snapshot {source}" if source else "Showing the snapshot", markup=False)

    def _selftests_running(self) -> bool:
        return any(w.group == "selftest" and w.state in (WorkerState.PENDING, WorkerState.RUNNING) for w in self.workers)

    # --- fix: plan, confirm, install ----------------------------------------------------------

    @on(msg.PlanRequested)
    def _plan_requested(self, message: msg.PlanRequested) -> None:
        if self.snapshot is None:
            self.notify("The plan needs the finished snapshot; wait for the probes.", severity="warning")
            return
        self._plan(message)

    def _plan(self, wishes: msg.PlanRequested) -> None:
        """Plan as `fix --dry-run` (for a snapshot: `fix --snapshot`), with the Fix tab's wishes; the index base is
        checked as --index-base is, its errors naming the box."""
        from envdoctor.tui.fix_pane import INDEX_BASE
        from envdoctor.usecases.plan_fix import FixWishes, check_torch_index, plan_fix

        snap, python = self.snapshot, self.fix_target
        asked = FixWishes(wishes.torch, wishes.deepspeed, None, wishes.index_base, index_base_name=INDEX_BASE)

        def call() -> Any:
            return check_torch_index(plan_fix(snap, self.settings.fix_setup(), asked, python))

        self.run_use_case(call, msg.PlanReady, group="plan", description="planning")

    @on(msg.PlanReady)
    def _plan_ready(self, message: msg.PlanReady) -> None:
        self.plan_result = message.result
        self.plan = plan = message.result.plan if message.result is not None else None

        notes = list(message.result.install_notes) if message.result is not None else []

        def show(fix: Any) -> None:
            fix.notes = notes
            fix.plan_error = message.error
            fix.plan = plan

        self._on_pane("fix", show, key="plan")

    @on(msg.FixFinding)
    def _fix_finding(self, message: msg.FixFinding) -> None:
        wishes = fix_wishes(message.finding) or {}

        def plan(fix: Any) -> None:
            fix.set_wishes(fix.wishes().torch, wishes.get("deepspeed"))
            self._plan_requested(fix.wishes())

        self.action_show_tab("fix")
        self._on_pane("fix", plan)

    @on(msg.ApplyRequested)
    def _apply_requested(self) -> None:
        planned, target = self.plan_result, self.fix_target
        if not target:
            where = f"the snapshot {self.source}" if self.source else "a snapshot taken elsewhere"
            self.notify(f"Not applied: this plan is for {where}, not this machine; it is a dry run (as `envdoctor fix "
                        "--snapshot`). Run `envdoctor fix` on the machine it came from.", severity="error", markup=False)
            return
        if planned is None or planned.status != "planned":
            return
        plan = planned.plan
        body = Text()
        body.append("Install into ")
        body.append(f"{target}:\n", style="bold")
        for p in plan.packages:
            body.append(f"  {p.pin}\n", style="bold cyan")
        for r in plan.requirements:
            body.append(f"  {r}  (torch held)\n", style="bold cyan")
        from envdoctor.wheels.steps import unsafe_steps

        risky = unsafe_steps(plan)
        for s in risky:  # the confirmation is the TUI's --unsafe: it names what compiles
            body.append(f"  UNSAFE: rebuild {' '.join(s.installs)} from source (it compiles)\n", style="bold red")
        body.append("\nThe packages it replaces are kept first; if the install or the verification fails, "
                    "the environment is put back exactly as it was.")

        def confirmed(yes: Optional[bool]) -> None:
            if yes and not self._quitting:
                self._panes["fix"].start_install()
                self._install(planned, unsafe=bool(risky))

        from envdoctor.tui.modals import ConfirmScreen

        self.push_screen(ConfirmScreen("Apply this plan?", body, yes="Install and rebuild" if risky else "Install"),
                         confirmed)

    def _install(self, planned: Any, unsafe: bool = False) -> None:
        from envdoctor.usecases.apply_fix import apply_fix

        def log(line: str) -> None:
            self.post_message(msg.InstallLog(line))

        self.run_use_case(lambda: apply_fix(planned, self.settings.fix_setup(), log, unsafe=unsafe),
                          lambda result, error: msg.InstallDone(result.outcome if result else None, error),
                          group="install", description="installing")

    @on(msg.InstallLog)
    def _install_log(self, message: msg.InstallLog) -> None:
        self._on_pane("fix", lambda p: p.log_line(message.line))

    @on(msg.InstallDone)
    def _install_done(self, message: msg.InstallDone) -> None:
        self._on_pane("fix", lambda p: p.finish_install(message.outcome, message.error))
        if message.outcome is not None and message.outcome.status == "installed" and self.live:
            self.notify("Installed; probing again to show the new state.")
            self.action_reprobe()

    # --- self-tests ---------------------------------------------------------------------------

    @on(msg.SelftestRequested)
    def _selftest_requested(self, message: msg.SelftestRequested) -> None:
        if not self.fix_target:
            self.notify("Self-tests run on this machine; this is a recorded snapshot.", severity="warning")
            return
        from envdoctor.selftest.bandwidth import power_of_two_sizes
        from envdoctor.selftest.runner import SelftestOptions

        options = SelftestOptions(scratch=self.settings.selftest_dir)
        sizes = power_of_two_sizes(*options.size_range())
        self._on_pane("selftest", lambda p: p.start(message.names, sizes))
        self._selftests(message.names, self.fix_target, options)

    def _selftests(self, names: List[str], python: str, options: Any) -> None:
        from envdoctor.tui.selftest_pane import finished, run_in_worker

        def call() -> Any:
            worker = get_current_worker()
            return run_in_worker(self.post_message, python, names, options, self.snapshot,
                                 cancelled=lambda: worker.is_cancelled or self._quitting,
                                 knowledge=self.settings.rules_knowledge())

        self.run_use_case(call, finished, group="selftest", description="self-tests", input_errors=False)

    @on(msg.SelftestsSelected)
    def _selftests_selected(self, message: msg.SelftestsSelected) -> None:
        self._on_pane("selftest", lambda p: p.select(message.names))

    @on(msg.SelftestProgress)
    def _selftest_progress(self, message: msg.SelftestProgress) -> None:
        self._on_pane("selftest", lambda p: p.log_line(message.name, message.line))

    @on(msg.SelftestDone)
    def _selftest_done(self, message: msg.SelftestDone) -> None:
        from envdoctor.present.selftest import summary_line

        self._on_pane("selftest", lambda p: p.show_result(message.result, summary_line(message.result)))

    @on(msg.SelftestsFinished)
    def _selftests_finished(self) -> None:
        self._on_pane("selftest", lambda p: p.finish())

    # --- Diagnose -----------------------------------------------------------------------------

    @on(msg.DiagnoseRequested)
    def _diagnose_requested(self, message: msg.DiagnoseRequested) -> None:
        if message.path is None and not (message.text or "").strip():
            self.notify("Paste a text (a traceback, a build log, collect_env, an NCCL log) first.", severity="warning")
            return
        from envdoctor.usecases.diagnose_view import diagnose_input

        path, text, snap = message.path, message.text, self.snapshot  # the machine's facts, once probed
        self.run_use_case(lambda: diagnose_input(path, text, self.settings.knowledge(), snap, keep_text=TEXTAREA_MAX),
                          lambda result, error: msg.UseCaseDone("diagnose", result, error),
                          group="diagnose", description="diagnosis")

    # --- one handler for every worker's failure -----------------------------------------------

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state != WorkerState.ERROR:
            return
        worker = event.worker
        if worker.group == "install":
            self._on_pane("fix", lambda p: p.finish_install(None, f"{type(worker.error).__name__}: {worker.error}"))
        elif worker.group == "selftest":
            self._on_pane("selftest", lambda p: p.finish())
        from envdoctor.tui.modals import ErrorScreen

        self.push_screen(ErrorScreen(f"{worker.description} failed", f"{type(worker.error).__name__}: {worker.error}"))

    # --- actions ------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: Tuple[object, ...]) -> Optional[bool]:
        if action == "reprobe" and not self.live and self.probe_context is None:
            return False  # a recorded snapshot cannot be probed again: hide the key
        if action == "leave":  # shown (and needed) only where the focus is in an input or a list
            return not self.screen.is_modal and not isinstance(self.focused, (TabBar, type(None)))
        return True

    def action_show_tab(self, tab: str) -> None:
        tabs = self.query_one("#tabs", TabBar)
        if tabs.active == tab:
            self._enter(tab)
            return
        # Focus leaves the pane being hidden first: a focused widget there would pull its tab back.
        tabs.focus()
        tabs.active = tab

    @property
    def active_tab(self) -> str:
        """The id of the tab on show."""
        return self.query_one("#tabs", TabBar).active

    @on(TabBar.Changed, "#tabs")
    def _tab_activated(self, event: TabBar.Changed) -> None:
        tab = event.tab
        self.query_one("#tab-content", ContentSwitcher).current = tab
        waiting = next((t for t in self._unmounted if t.id == tab), None)
        if waiting is not None:  # opened before its pane was mounted: that pane is the next one
            self._unmounted.remove(waiting)
            self._unmounted.insert(0, waiting)
        if not event.by_arrow:  # left and right on the bar keep the focus there, to go on moving
            self._enter(tab)

    def _enter(self, tab: str) -> None:
        """The tab's entry widget takes the focus (the Diagnose path box, the findings list); else the tab bar."""
        tabs = self.query_one("#tabs", TabBar)

        def focus() -> None:
            if tabs.active != tab:
                return  # another tab was opened meanwhile: a focused widget here would pull this tab back
            pane = self._panes[tab]
            entry = getattr(pane, "ENTRY", None)
            (pane.query_one(entry) if entry else tabs).focus()

        self._on_pane(tab, lambda _: self.call_after_refresh(focus), key="enter")

    def action_leave(self) -> None:
        """Escape: out of any input or list, onto the tab bar, where every key is global again."""
        self.query_one("#tabs", TabBar).focus()

    def action_help(self) -> None:
        from envdoctor.tui.modals import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.help_rows()))

    def help_rows(self) -> List[Tuple[str, str]]:
        """(key, what it does) for every key: the app's, the tabs', and the keys inside widgets."""
        rows: List[Tuple[str, str]] = [("", "Keys that work everywhere except in a text input")]
        for b in self.BINDINGS:
            if isinstance(b, Binding) and not b.action.startswith("show_tab") and b.key != "escape":
                if b.action == "reprobe" and not self.live and self.probe_context is None:
                    continue
                rows.append((b.key_display or b.key, b.tooltip or b.description))
        rows.append(("ctrl+p", "the command palette: tabs, findings, open a snapshot, export, screenshot"))
        rows.append(("", "Tabs"))
        rows.extend((t.key, f"{t.title}: {t.about}") for t in TABS)
        rows.append(("", "Moving around"))
        rows.extend([("escape", "leave a text input or a list (then every key above works)"),
                     ("tab / shift+tab", "next / previous widget"),
                     ("left / right", "on the tab bar: previous / next tab"),
                     ("up / down, enter", "move in a list or table; choose"),
                     ("ctrl+q", "quit from anywhere, even a text input")])
        for t in TABS:  # a pane's own keys (not those it inherits from its container)
            for b in vars(t.pane).get("BINDINGS", []):
                rows.append((b.key, f"{t.title} tab: {b.tooltip or b.description}"))
        return rows

    def action_export(self) -> None:
        if self.snapshot is None or self.findings is None:
            self.notify("The report is ready when the probes and the diagnosis have finished.", severity="warning")
            return
        from envdoctor.tui.modals import ExportScreen

        self.push_screen(ExportScreen(self.report_path), self._export)

    def report_text(self) -> str:
        """The redacted markdown report of everything the app shows: facts, findings, plan, self-tests, the diagnosis."""
        from envdoctor.present.report import render_report

        selftests, diagnosis = self._panes.get("selftest"), self._panes.get("diagnose")
        ran_here = selftests is not None and not self.source  # self-tests ran on this machine, not the opened file's
        return render_report(self.snapshot, self.findings or [], redact=True, plan=self.plan,
                             selftests=list(selftests.results.values()) if ran_here else [],
                             diagnosis=diagnosis.report if diagnosis is not None else None)

    def _export(self, choice: Optional[Tuple[str, str]]) -> None:
        if choice is None:
            return
        what, path = choice
        if what == "copy":
            self.copy_to_clipboard(self.report_text())
            self.notify("Report copied to the clipboard (where the terminal allows it: OSC 52).")
            return
        target = Path(path).expanduser()
        note = ""
        if not target.parent.exists():
            note = f" ({target.parent} does not exist)"
            target = Path.cwd() / target.name
        if target.exists():
            from envdoctor.tui.modals import ConfirmScreen

            def confirmed(yes: Optional[bool]) -> None:
                if yes:
                    self._write_report(target, note)

            self.push_screen(ConfirmScreen("Replace the existing file?", Text(f"{target} exists; replace it with "
                                                                              "this report?"), yes="Replace"), confirmed)
            return
        self._write_report(target, note)

    def _write_report(self, target: Path, note: str) -> None:
        from envdoctor.present.output import write_file

        try:
            write_file(target, self.report_text())
        except InputError as exc:
            self.notify(f"Cannot write the report: {exc}", severity="error")
            return
        self.report_path = str(target)
        self.notify(f"Report written to {target}{note}")

    def deliver_screenshot(self, filename: Optional[str] = None, path: Optional[str] = None,
                           time_format: Optional[str] = None) -> Optional[str]:
        """The palette's Screenshot: into ~/Downloads, or the current directory where there is none."""
        if path is None:
            from platformdirs import user_downloads_path

            if not user_downloads_path().is_dir():
                path = os.getcwd()
        return super().deliver_screenshot(filename, path, time_format)

    def action_copy_report(self) -> None:
        if self.snapshot is None or self.findings is None:
            self.notify("The report is ready when the probes and the diagnosis have finished.", severity="warning")
            return
        self._export(("copy", ""))

    async def action_quit(self) -> None:
        if self._installing():
            self.notify("An install is running; quitting now could leave the environment half-changed. "
                        "Wait for it to finish (or roll back).", severity="error")
            return
        self.exit(return_code=self.check_result.exit_code() if self.check_result is not None else NO_VERDICT)

    def exit(self, result: Optional[int] = None, return_code: int = 0, message: Any = None) -> None:
        """Quit, ending what the probes and self-tests are running (the process would wait for them), but never an
        install: it finishes or rolls back first."""
        self._stop_commands()
        super().exit(result, return_code, message)

    def on_unmount(self) -> None:
        self._stop_commands()  # also when Textual closes without exit(): an unhandled exception

    def _stop_commands(self) -> None:
        self._quitting = True
        if not self._installing():
            from envdoctor.processes import stop_all

            stop_all(refuse_new=True)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for tab in TABS:
            yield SystemCommand(f"Go to {tab.title}", tab.about, lambda t=tab.id: self.action_show_tab(t))
        yield SystemCommand("Keys", "Every key and what each tab is for", self.action_help)
        yield SystemCommand("Export report", "Write the redacted markdown report to a file", self.action_export)
        yield SystemCommand("Copy report", "Copy the redacted markdown report to the clipboard", self.action_copy_report)
        yield SystemCommand("Open snapshot…", "Show a snapshot taken elsewhere (`envdoctor snapshot -o FILE`) instead "
                            "of this machine; its plan is a dry run", self.action_open_snapshot)
        if self.live:
            yield SystemCommand("Probe again", "Probe this machine again", self.action_reprobe)
        elif self.probe_context is not None:
            yield SystemCommand("Probe this machine", "Leave the snapshot and probe this machine again",
                                self.action_reprobe)
        for f in self.findings or []:
            yield SystemCommand(f"{f.id}: {f.title}", f"{f.severity} finding: show its detail and fix",
                                lambda fid=f.id: self._goto_finding(fid))

    def _goto_finding(self, finding_id: str) -> None:
        self.action_show_tab("findings")
        self._on_pane("findings", lambda p: p.select(finding_id))


def make_app(snapshot: Optional[Snapshot] = None, probe_context: Optional[ProbeContext] = None, *,
             fix_python: Optional[str] = None, index_base: Optional[str] = None, torch: Optional[str] = None,
             deepspeed: Optional[str] = None, report_path: str = "envdoctor-report.md",
             settings: Optional[Settings] = None, source: Optional[str] = None) -> EnvDoctorApp:
    """The app over a recorded snapshot, or (snapshot None) probing live with `probe_context` (default: this
    interpreter). `fix_python` is the environment Apply installs into (live: the probed one); `index_base`,
    `torch` and `deepspeed` are what `fix --index-base/--torch/--deepspeed` take; `settings` default to the
    ones this process's environment gives; `source`: the file `snapshot` was read from (the Overview names it)."""
    return EnvDoctorApp(snapshot=snapshot, probe_context=probe_context, fix_python=fix_python, index_base=index_base,
                        torch=torch, deepspeed=deepspeed, report_path=report_path, settings=settings, source=source)


def run_tui(snapshot: Optional[Snapshot] = None, source: Optional[str] = None) -> int:
    """`envdoctor` in a terminal: probe this machine and show it (`envdoctor --snapshot FILE`: show that
    `snapshot`, read from `source`, instead); the exit code is `check`'s."""
    try:
        settings = Settings.from_env(os.environ)
    except InputError as exc:
        print(f"envdoctor: error: {exc}", file=sys.stderr)
        return 2
    app = make_app(snapshot, settings=settings, source=source)
    app.run()
    if app.findings is None and app.return_code == NO_VERDICT:
        print("envdoctor: quit before the diagnosis was done: no verdict (run `envdoctor check` for one)",
              file=sys.stderr)
    return int(app.return_code or 0)
