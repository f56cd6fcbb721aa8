"""The Self-tests tab: run each test or all of them; a results table (rows kept across runs), the selected row's
detail (numbers, verdict, log), live progress per message size and step, busbw by size, the backward speed-up."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Tuple

from rich.console import Group, RenderableType
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Button, DataTable, ProgressBar, Static

from envdoctor.present.metric_words import metric_label, metric_value
from envdoctor.selftest.kind import SizePlot, SpeedupPlot
from envdoctor.selftest.registry import ALL, find, kinds
from envdoctor.selftest.runner import SelftestOptions
from envdoctor.snapshot import Snapshot
from envdoctor.tui import messages as msg
from envdoctor.tui.charts import BusbwChart, SpeedupBars, flatten, size_label

if TYPE_CHECKING:
    from envdoctor.usecases.selftest import SelftestRun

STATUS_STYLE = {"passed": "green", "failed": "bold red", "skipped": "yellow", "running": "cyan", "pending": "dim"}
UNRECORDED_STEPS = 4  # a result of a test no record has (a recorded run from elsewhere): counted lines, no plots


class SelftestPane(Vertical):
    """Run each self-test or all of them; what each one measured, live and after."""

    ENTRY = "#run-all"
    running: reactive[bool] = reactive(False)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.results: Dict[str, Any] = {}
        self.summaries: Dict[str, str] = {}
        self.logs: Dict[str, List[str]] = {}
        self.sizes: List[int] = []
        self.busbw: Dict[int, float] = {}
        self._sizes: List[int] = []
        self._choosing = False  # a Run all waits for the tests the run chooses
        self._queue: List[str] = []
        self._steps = 0

    def compose(self) -> ComposeResult:
        with Horizontal(id="selftest-controls"):
            yield Button("Run all", id="run-all", variant="primary", compact=True)
            for kind in kinds():
                yield Button(kind.name, id=f"run-{kind.name}", compact=True)
        with Horizontal(id="selftest-progress-row"):
            yield ProgressBar(id="selftest-progress", show_eta=False)
            yield Static(id="selftest-step")
        yield DataTable(id="selftest-table", cursor_type="row")
        with Horizontal(id="selftest-body"):
            with VerticalScroll(id="selftest-detail"):
                yield Static(Text("Run a test; select a row to see what it measured.", style="dim"),
                             id="selftest-detail-text")
            with VerticalScroll(id="selftest-plots"):
                yield Static(id="busbw-chart")
                yield Static(id="speedup")

    def on_mount(self) -> None:
        self.query_one("#selftest-table", DataTable).add_columns("test", "status", "seconds", "result")
        self.query_one("#selftest-progress", ProgressBar).update(total=1, progress=0)
        self.query_one("#busbw-chart").display = False
        self.query_one("#speedup").display = False

    def watch_running(self, running: bool) -> None:
        for b in self.query("#selftest-controls Button"):
            b.disabled = running

    # --- what the app hands down --------------------------------------------------------------

    def start(self, names: List[str], sizes: Sequence[int] = ()) -> None:
        """A run of `names` begins (`["all"]`: the tests are chosen once the target is probed, see `select`);
        `sizes` are the all-reduce message sizes it will measure."""
        self.running = True
        self._sizes = list(sizes)
        self._choosing = list(names) == [ALL]
        if self._choosing:
            self._queue = []
            self.query_one("#selftest-progress", ProgressBar).update(total=None, progress=0)
            self.query_one("#selftest-step", Static).update(
                Text("all: probing the target for the tests that apply there", style="cyan"))
        else:
            self._begin(names)

    def select(self, names: Sequence[str]) -> None:
        """The tests the run chose (after probing the target): a Run all begins with them."""
        if self._choosing:
            self._choosing = False
            self._begin(names)

    def _begin(self, names: Sequence[str]) -> None:
        """A pending row for each test, the first one running."""
        self._queue = list(names)
        self._steps = 0
        table = self.query_one("#selftest-table", DataTable)
        for name in names:
            self.results.pop(name, None)
            self.logs[name] = []
            cells = (name, Text("pending", style="dim"), "", "")
            if name in table.rows:
                for col, value in zip(table.ordered_columns, cells):
                    table.update_cell(name, col.key, value)
            else:
                table.add_row(*cells, key=name)
        self.query_one("#selftest-progress", ProgressBar).update(total=100 * len(names), progress=0)
        if any(_size_line(n) for n in names):
            self.sizes, self.busbw = list(self._sizes), {}
            self._draw_busbw()
        if names:
            self._mark_running(names[0])

    def log_line(self, name: str, line: str) -> None:
        from envdoctor.present.terminal import printable
        from envdoctor.redact import scrub_secrets

        line = printable(scrub_secrets(line.strip()))  # rank output, as it came
        self.logs.setdefault(name, []).append(line)
        kind, size_line = find(name), _size_line(name)
        point = size_line(line) if size_line else None
        if point is not None:
            self.busbw[point[0]] = point[1]
            self._draw_busbw()
            step = f"{name}: {len(self.busbw)} of {len(self.sizes) or '?'} message sizes, " \
                   f"{size_label(point[0])} at {point[1]:.3g} GB/s busbw"
            share = len(self.busbw) / len(self.sizes) if self.sizes else 0.0
        else:
            self._steps += 1
            step = line if line.startswith(f"{name}:") else f"{name}: {line}"
            steps = kind.steps if kind else UNRECORDED_STEPS
            share = min(0.9, self._steps / steps) if size_line is None else None
        self.query_one("#selftest-step", Static).update(Text(step, style="cyan", overflow="ellipsis", no_wrap=True))
        if share is not None:
            self._progress(name, share)
        if self._highlighted() == name:
            self._show_detail(name)

    def show_result(self, result: Any, summary_line: str, next_name: Optional[str] = None) -> None:
        from envdoctor.present.words import word

        self.results[result.name] = result
        self.summaries[result.name] = summary_line
        table = self.query_one("#selftest-table", DataTable)
        cols = table.ordered_columns
        reason = summary_line or ((result.error or "").strip().splitlines() or [""])[0]
        table.update_cell(result.name, cols[1].key, Text(word(result.status), style=STATUS_STYLE.get(result.status, "")),
                          update_width=True)
        table.update_cell(result.name, cols[2].key, f"{result.seconds:.1f}", update_width=True)
        table.update_cell(result.name, cols[3].key, reason, update_width=True)
        self._progress(result.name, 1.0)
        self._steps = 0
        nxt = next_name or self._after(result.name)
        if nxt:
            self._mark_running(nxt)
        kind = find(result.name)
        for plot in kind.plots(result) if kind else ():
            if isinstance(plot, SizePlot):
                self.busbw = dict(plot.points)
                self.sizes = sorted(set(self.sizes) | set(self.busbw))
                self._draw_busbw(what=plot.what)
            elif isinstance(plot, SpeedupPlot):
                box = self.query_one("#speedup", Static)
                box.display = True
                box.update(SpeedupBars(plot.looped_seconds, plot.batched_seconds, plot.caption))
        self._show_detail(self._highlighted() or result.name)

    def finish(self) -> None:
        self.running = False
        if self._choosing:  # the run ended before it chose its tests (its worker failed): no bar left spinning
            self._choosing = False
            self.query_one("#selftest-progress", ProgressBar).update(total=1, progress=0)
        self.query_one("#selftest-step", Static).update("")

    # --- drawing ------------------------------------------------------------------------------

    def _after(self, name: str) -> Optional[str]:
        q = self._queue
        return q[q.index(name) + 1] if name in q and q.index(name) + 1 < len(q) else None

    def _mark_running(self, name: str) -> None:
        table = self.query_one("#selftest-table", DataTable)
        table.update_cell(name, table.ordered_columns[1].key, Text("running", style="cyan"), update_width=True)
        table.move_cursor(row=table.get_row_index(name))
        self.query_one("#selftest-step", Static).update(Text(f"{name}: starting", style="cyan"))

    def _progress(self, name: str, share: float) -> None:
        if name in self._queue:
            bar = self.query_one("#selftest-progress", ProgressBar)
            bar.update(progress=max(bar.progress, 100 * self._queue.index(name) + round(100 * share)))

    def _draw_busbw(self, what: str = "busbw") -> None:
        chart = self.query_one("#busbw-chart", Static)
        chart.display = bool(self.sizes or self.busbw)
        chart.update(BusbwChart(self.sizes, self.busbw, what=what))

    def _highlighted(self) -> Optional[str]:
        table = self.query_one("#selftest-table", DataTable)
        if not table.row_count:
            return None
        return str(table.coordinate_to_cell_key((table.cursor_row, 0)).row_key.value)

    def _show_detail(self, name: str) -> None:
        self.query_one("#selftest-detail-text", Static).update(detail(name, self.results.get(name),
                                                                       self.summaries.get(name, ""), self.logs.get(name, [])))

    @on(DataTable.RowHighlighted, "#selftest-table")
    def _row(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail(str(event.row_key.value))

    @on(Button.Pressed, "#selftest-controls Button")
    def _run(self, event: Button.Pressed) -> None:
        which = (event.button.id or "").removeprefix("run-")
        self.post_message(msg.SelftestRequested([ALL if which == "all" else which]))


def _size_line(name: str) -> Optional[Callable[[str], Optional[Tuple[int, float]]]]:
    """How the test's progress lines name a finished message size (None: its lines are counted as steps)."""
    kind = find(name)
    return kind.size_line if kind else None


def detail(name: str, result: Any, summary_line: str, log: List[str]) -> RenderableType:
    """One test's verdict and why, every number it measured, the kept log and its progress lines."""
    from envdoctor.present.words import word

    text = Text()
    text.append(f"{name}: ", style="bold")
    if result is None:
        text.append("running…\n" if log else "not run yet\n", style="cyan" if log else "dim")
    else:
        text.append(word(result.status), style=STATUS_STYLE.get(result.status, "bold"))
        text.append(f" in {result.seconds:.1f} s\n")
        if summary_line:
            text.append(summary_line + "\n")
        if result.error:
            text.append(("why: " if result.status == "skipped" else "error: "), style="bold")
            text.append(result.error.strip() + "\n")
        for f in result.findings:
            text.append(f"{f.severity.upper()} {f.id} ", style="bold red" if f.severity == "error" else "bold yellow")
            text.append(f"{f.title}\n  fix: {f.fix}\n")
        if result.log:
            text.append("log kept: ", style="bold")
            text.append(result.log + "\n")
        rows = list(flatten(result.metrics or {}))
        if rows:
            text.append("\nmeasured\n", style="bold")
            labelled = [(metric_label(k), v) for k, v in rows]
            wide = min(40, max(len(label) for (label, _), _ in labelled) + 1)
            for (label, unit), v in labelled:
                text.append(f"  {label + ':':<{wide}} ", style="dim")
                text.append(metric_value(v, unit) + "\n")
    if log:
        text.append("\nprogress\n", style="bold")
        for line in log[-200:]:
            text.append(f"  {line}\n", style="dim")
    return Group(text)


def run_in_worker(post: Callable[[Message], None], python: str, names: Sequence[str], options: SelftestOptions,
                  links: Optional[Snapshot], cancelled: Callable[[], bool], knowledge: Optional[Any] = None) -> SelftestRun:
    """The Self-tests tab's use-case call (in the app's worker): the use case over the app's snapshot, its events
    posted as the tab's messages as they come; the run is the worker's result."""
    from envdoctor.usecases.selftest import Finished, Said, Selected, SelftestEvent, run_selftests

    def on_event(event: SelftestEvent) -> None:
        if isinstance(event, Selected):
            post(msg.SelftestsSelected(list(event.names)))
        elif isinstance(event, Said) and event.test is not None:  # the run's own lines (the target) are the CLI's
            post(msg.SelftestProgress(event.test, event.text))
        elif isinstance(event, Finished):
            post(msg.SelftestDone(event.result))

    return run_selftests(python, names, options, links=links, probe_links=False, on_event=on_event, cancelled=cancelled,
                         knowledge=knowledge)


def finished(done: Optional[SelftestRun], error: Optional[str]) -> Optional[Message]:
    """What the tab is told when the run is over: SelftestsFinished, unless the run was cancelled (a newer run owns
    the tab by then, or the app is quitting)."""
    return None if done is not None and done.cancelled else msg.SelftestsFinished()
