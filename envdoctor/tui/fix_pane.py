"""The Fix tab: the plan (with the reason for each choice and each rejected candidate), Apply, live install
progress and the outcome."""

from __future__ import annotations

from typing import Any, Optional, Sequence

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.reactive import reactive
from textual.widgets import Button, Checkbox, Input, ProgressBar, RichLog, Static

from envdoctor.present.terminal import printable
from envdoctor.present.words import word
from envdoctor.redact import scrub_secrets
from envdoctor.tui import messages as msg
from envdoctor.wheels.release_files import file_name

INDEX_BASE = "Index base"  # the Fix tab's box for --index-base: its errors name it so
INDEX_BASE_BOX = "the Index base box of the Fix tab"


def here(line: str) -> str:
    """A message as the TUI says it: the way out of an unreachable index names the Index base box, not --index-base."""
    from envdoctor.usecases.plan_fix import way_out_through

    return way_out_through(line, INDEX_BASE_BOX)


def plan_text(plan: Any, target: Optional[str], notes: Sequence[str] = (), source: Optional[str] = None) -> Text:
    """The plan as the Fix tab shows it; `notes`: what `fix --dry-run` adds (an unreachable PyTorch index);
    `source`: the snapshot file it was planned for (a dry run, as `fix --snapshot`)."""
    style = {"planned": "bold yellow", "nothing_to_do": "bold green", "impossible": "bold red"}.get(plan.status, "bold")
    text = Text()
    text.append(f"Plan: {word(plan.status)}", style=style)
    text.append(f" — {plan.reason}\n" if plan.reason else "\n")
    for n in notes:
        text.append(f"  {here(n)}\n", style="bold yellow")
    steps = getattr(plan, "steps", None) or []
    if all(s.id in ("torch", "deepspeed") for s in steps):
        steps = []  # the torch plan alone: its packages below say it all
    for s in steps:
        text.append(f"  [{s.id}] ", style="bold")
        text.append(f"{s.kind}: {' '.join(s.installs) or '-'}", style="cyan" if s.status == "planned" else "dim")
        if s.applicability == "unsafe":
            text.append("  UNSAFE: compiles (asked again before it runs)", style="bold red")
        text.append(f"\n    {s.reason if s.status == 'planned' else word(s.status) + ': ' + s.why}\n", style="dim")
    for r in getattr(plan, "requirements", None) or []:
        text.append("  install ", style="bold")
        text.append(r, style="bold cyan")
        text.append("  with torch held, from your pip index\n", style="dim")
    for u in getattr(plan, "files", None) or []:
        text.append("  install ", style="bold")
        text.append(file_name(u), style="bold cyan")
        text.append(f"  the release file, from {scrub_secrets(u)}\n", style="dim")
    for p in plan.packages:
        text.append("  install ", style="bold")
        text.append(p.pin, style="bold cyan")
        text.append(f"  from {scrub_secrets(p.index_url) if p.index_url else 'your pip index'}\n", style="dim")
        text.append(f"    because {p.reason}" + (f" [{word(p.status)}]" if p.status != "verified" else "") + "\n")
    for k in plan.kept:
        text.append(f"  keep {k}\n")
    for u in plan.upgrade:
        text.append(f"  upgrade: {u}\n", style="yellow")
    for n in plan.notes:
        text.append(f"  note: {n}\n", style="dim")
    if plan.commands:
        text.append("Commands:\n", style="bold")
        for c in plan.commands:
            text.append("  $ " + " ".join(c) + "\n", style="cyan")
    if plan.env:
        text.append("  with environment: " + " ".join(f"{k}={v}" for k, v in plan.env.items()) + "\n", style="dim")
    if plan.rejected:
        text.append(f"Rejected candidates ({len(plan.rejected)}):\n", style="bold")
        for r in plan.rejected:
            text.append(f"  {r.name} {r.version} {r.variant}: ", style="dim")
            text.append(f"{r.why}\n")
    if source and not target:
        text.append(f"\nDry run: the plan for the snapshot {source} (as `envdoctor fix --snapshot`); it cannot be "
                    "applied here: run `envdoctor fix` on the machine it came from", style="dim")
        return text
    text.append("\nTarget environment: " + (target or "none: this snapshot was recorded elsewhere, so the plan is shown "
                                             "but cannot be applied here"), style="dim")
    return text


def outcome_text(outcome: Any, error: Optional[str]) -> Text:
    if outcome is None:
        return Text(f"Could not start: {error}", style="bold red")
    if outcome.status == "installed":
        text = Text("Installed and verified in a fresh interpreter: ", style="bold green")
        text.append(outcome.message)
        text.append("\n`envdoctor undo` puts the previous packages back.", style="dim")
    else:
        text = Text("Failed, rolled back: ", style="bold red")
        text.append(here(outcome.message) + "\n")
        if outcome.rollback_ok:
            text.append("Rollback complete: the environment is exactly as it was.\n", style="bold green")
        elif outcome.rollback_ok is False:
            text.append("ROLLBACK INCOMPLETE: see the log.\n", style="bold red")
    changed = sorted(n for n in set(outcome.before) | set(outcome.after) if outcome.before.get(n) != outcome.after.get(n))
    shown = changed or sorted(n for n in outcome.before if n in ("torch", "deepspeed"))
    if outcome.after:
        for n in shown:
            text.append(f"\n  {n}: {outcome.before.get(n, '(none)')} before → {outcome.after.get(n, '(none)')} now")
    return text


class TickBox(Checkbox):
    """A checkbox whose box is empty when unticked (Textual's shows a dim X, which reads as ticked)."""

    BUTTON_INNER = " "

    def render(self) -> Any:
        self.BUTTON_INNER = "X" if self.value else " "
        return super().render()


class FixPane(Vertical):
    """The plan (with the reason for each choice and each rejected candidate), Apply, live progress and the outcome."""

    plan: reactive[Any] = reactive(None, always_update=True)
    plan_error: reactive[Optional[str]] = reactive(None)
    target: reactive[Optional[str]] = reactive(None)
    installing: reactive[bool] = reactive(False)
    notes: Sequence[str] = ()  # what `fix --dry-run` adds to the plan on show
    source: reactive[Optional[str]] = reactive(None)  # the snapshot file the plan is for (None: this machine)

    def compose(self) -> ComposeResult:
        with Horizontal(id="fix-controls"):
            yield Input(placeholder="torch, e.g. 2.9", id="torch-spec")
            yield Input(placeholder=f"{INDEX_BASE} URL", id="index-base",
                        tooltip="a PyTorch wheel index or mirror laid out as URL/<variant>/<package>/, as "
                                "`envdoctor fix --index-base URL`; blank: ENVDOCTOR_TORCH_INDEX, else the official one")
            yield TickBox("DeepSpeed", id="want-deepspeed", tooltip="also install DeepSpeed (re-plans)")
            yield Button("Plan", id="plan-button", compact=True)
            yield Button("Apply", id="apply-button", variant="warning", disabled=True, compact=True)
        with VerticalScroll(id="plan-scroll"):
            yield Static(Text("Planning…", style="dim"), id="plan-text")
            yield Static(id="outcome")
        yield ProgressBar(id="install-progress", show_eta=False)
        yield RichLog(id="install-log", wrap=True, markup=False, highlight=False)

    def on_mount(self) -> None:
        self.query_one("#install-progress").display = False
        self.query_one("#install-log").display = False

    def set_wishes(self, torch: Optional[str], deepspeed: Optional[str], index_base: Optional[str] = None) -> None:
        """Fill the controls (no plan is asked for: the caller asks); `index_base` None leaves its box as it is."""
        self.query_one("#torch-spec", Input).value = torch or ""
        box = self.query_one("#want-deepspeed", Checkbox)
        with box.prevent(Checkbox.Changed):
            box.value = deepspeed is not None
        if index_base is not None:
            self.query_one("#index-base", Input).value = index_base

    def wishes(self) -> msg.PlanRequested:
        return msg.PlanRequested.from_controls(self.query_one("#torch-spec", Input).value,
                                               self.query_one("#want-deepspeed", Checkbox).value,
                                               self.query_one("#index-base", Input).value)

    def _update(self) -> None:
        if not self.is_mounted:
            return
        box = self.query_one("#plan-text", Static)
        if self.plan_error:
            box.update(Text(f"Cannot plan: {self.plan_error}", style="bold red"))
        elif self.plan is not None:
            box.update(plan_text(self.plan, self.target, self.notes, self.source))
        else:
            box.update(Text("Planning…", style="dim"))
        can = (self.plan is not None and not self.plan_error and self.plan.status == "planned" and bool(self.target)
               and not self.installing)
        self.query_one("#apply-button", Button).disabled = not can
        self.query_one("#plan-button", Button).disabled = self.installing

    watch_plan = watch_plan_error = watch_target = watch_installing = watch_source = _update

    def start_install(self) -> None:
        self.installing = True
        self.query_one("#outcome", Static).update("")
        bar = self.query_one("#install-progress", ProgressBar)
        bar.display = True
        bar.update(total=None, progress=0)
        log = self.query_one("#install-log", RichLog)
        log.display = True
        log.clear()
        log.focus()  # keys go to the app (q is refused while installing), not into the torch-versions input

    def log_line(self, line: str) -> None:
        self.query_one("#install-log", RichLog).write(printable(scrub_secrets(line)))  # pip's output, as it came

    def finish_install(self, outcome: Any, error: Optional[str]) -> None:
        self.installing = False
        bar = self.query_one("#install-progress", ProgressBar)
        bar.update(total=1, progress=1)
        self.query_one("#outcome", Static).update(outcome_text(outcome, error))
        self.query_one("#plan-scroll").scroll_end(animate=False)

    @on(Button.Pressed, "#plan-button")
    @on(Input.Submitted, "#torch-spec")
    @on(Input.Submitted, "#index-base")
    @on(Checkbox.Changed, "#want-deepspeed")
    def _plan(self) -> None:
        self.post_message(self.wishes())

    @on(Button.Pressed, "#apply-button")
    def _apply(self) -> None:
        self.post_message(msg.ApplyRequested())
