"""The app's tabs. Each pane shows what the app hands it (attributes down) and asks for work by posting a
message (messages up); none of them calls the core's decision code itself."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.reactive import reactive
from textual.widgets import Button, DataTable, Label, OptionList, Static
from textual.widgets.option_list import Option

from envdoctor.findings import Finding, summary
from envdoctor.fixes import wishes
from envdoctor.present.words import word
from envdoctor.tui import messages as msg
from envdoctor.tui.charts import Wrapped

if TYPE_CHECKING:  # the snapshot's types (and the facts drawn from them) load when there is a snapshot to show
    from envdoctor.snapshot import ProbeRecord, Snapshot

SEVERITY_STYLE = {"error": "bold red", "warning": "bold yellow", "info": "bold cyan"}
STATUS_STYLE = {"ok": "green", "failed": "bold red", "timeout": "bold red", "skipped": "yellow", "running": "cyan",
                "passed": "green", "pending": "dim"}

# Which of the facts the Overview shows at a glance, by group and label (the rest is under "All facts").
GLANCE = {
    "Machine": ("os", "container", "WSL", "CPU", "memory", "/dev/shm"),
    "Driver and GPUs": ("driver", "GPUs"),
    "PyTorch": ("torch", "built for", "cuDNN / NCCL", "arch list", "CUDA available", "DeepSpeed"),
    "Python": ("python", "environment"),
}


def severity_text(severity: str) -> Text:
    return Text(severity.upper().ljust(7), style=SEVERITY_STYLE.get(severity, ""))


def facts_table(rows: Sequence[Tuple[str, str]]) -> Table:
    table = Table(show_header=False, box=None, padding=(0, 1), expand=True)
    table.add_column(style="bold", no_wrap=True, ratio=None)
    table.add_column(ratio=1)
    for label, value in rows:
        table.add_row(label, Wrapped(value))
    return table


def probe_table(rows: Sequence[Tuple[str, str, str]]) -> Text:
    """Each probe's name, status (coloured) and seconds, in aligned columns (plain text: it is redrawn on every
    layout pass before the first frame, where a table widget costs more than the rest of the Overview)."""
    name_w = max([len("probe"), *(len(r[0]) for r in rows)])
    status_w = max([len("status"), *(len(r[1]) for r in rows)])
    secs_w = max([len("seconds"), *(len(r[2]) for r in rows)])
    text = Text(no_wrap=True)
    text.append(f"{'probe':<{name_w}}  {'status':<{status_w}}  {'seconds':>{secs_w}}", style="bold")
    for name, status, secs in rows:
        text.append(f"\n{name:<{name_w}}  ")
        text.append(f"{status:<{status_w}}", style=STATUS_STYLE.get(status, ""))
        text.append(f"  {secs:>{secs_w}}")
    return text


def health_text(findings: Optional[List[Finding]], probes_done: int, probes_total: int) -> Text:
    if findings is None:
        if probes_done < probes_total:
            return Text(f"Probing this machine: {probes_done} of {probes_total} probes finished…", style="cyan")
        return Text("Diagnosing…", style="cyan")
    s = summary(findings)
    style = "bold red" if s["errors"] else "bold yellow" if s["warnings"] else "bold green"
    verdict = "Problems found" if s["errors"] else "Works, with warnings" if s["warnings"] else "Healthy"
    text = Text(f"{verdict}: {s['errors']} error(s), {s['warnings']} warning(s), {s['infos']} info(s)", style=style)
    if not findings:
        text.append(" — no findings: this machine is ready for PyTorch", style="green")
    return text


def source_text(source: str, snap: Optional[Snapshot]) -> Text:
    """The line that says the Overview shows a snapshot file, not this machine."""
    from envdoctor.present.terminal import printable

    taken = f", taken {snap.created}" if snap is not None and snap.created else ""
    text = Text("Snapshot ", style="bold magenta")
    text.append(printable(source), style="bold")
    text.append(f"{taken}: a recorded machine, not this one (the Fix tab plans a dry run)\n", style="magenta")
    return text


class OverviewPane(VerticalScroll):
    """The machine at a glance, the health summary, the findings in one line each, and each probe's status."""

    snapshot: reactive[Optional[Snapshot]] = reactive(None, always_update=True)
    findings: reactive[Optional[List[Finding]]] = reactive(None, always_update=True)
    probes: reactive[Dict[str, ProbeRecord]] = reactive(dict, always_update=True)
    source: reactive[Optional[str]] = reactive(None)  # the file of a snapshot taken elsewhere (None: not from a file)
    probe_names: Tuple[str, ...] = ()
    unanswered = "pending"  # the status of a probe without a record yet ("running" while this machine is probed)

    def compose(self) -> ComposeResult:
        yield Static(id="health")
        with Horizontal(id="overview-top"):
            yield Static(id="glance")
            yield Static(id="probe-table")

    def on_mount(self) -> None:
        self._refresh_all()

    def watch_snapshot(self) -> None:
        self._refresh_all()

    def watch_findings(self) -> None:
        self._refresh_all()

    def watch_probes(self) -> None:
        self._refresh_all()

    def watch_source(self) -> None:
        self._refresh_all()

    def _refresh_all(self) -> None:
        if not self.is_mounted:
            return
        done = sum(1 for r in self.probes.values() if r.status != "running")
        health = health_text(self.findings, done, len(self.probe_names))
        if self.source:
            health = source_text(self.source, self.snapshot).append_text(health)
        for f in self.findings or []:
            health.append("\n")
            health.append_text(severity_text(f.severity))
            health.append(f" {f.id} ", style="bold")
            health.append(f.title)
        if self.findings:
            health.append("\nf: details and fixes", style="dim")
        self.query_one("#health", Static).update(health)
        glance = self.query_one("#glance", Static)
        if self.snapshot is None:
            glance.update(Text("waiting for the first probes…", style="dim"))
        else:
            from envdoctor.present.facts import fact_groups

            rows = [(label, value) for title, items in fact_groups(self.snapshot) for label, value in items
                    if title in GLANCE and (label in GLANCE[title] or label.startswith("GPU "))]
            glance.update(facts_table(rows))
        self.query_one("#probe-table", Static).update(probe_table(self.probe_rows()))

    def probe_rows(self) -> List[Tuple[str, str, str]]:
        """(probe, status, seconds) for each probe, in the probes' order."""
        rows = []
        for name in self.probe_names:
            rec = self.probes.get(name)
            secs = ""
            if rec and rec.seconds is not None:  # a record: the snapshot's module is loaded
                from envdoctor.present.facts import show

                secs = show(rec.seconds, "s")
            rows.append((name, rec.status if rec else self.unanswered, secs))
        return rows


LINK_STYLE = (("NV", "bold green"), ("PIX", "green"), ("PXB", "yellow"), ("PHB", "yellow"), ("NODE", "dark_orange"),
              ("SYS", "bold red"), ("X", "dim"))
LINK_LEGEND = ("NV# NVLink (# links), PIX one PCIe switch, PXB several switches, PHB through the CPU's host bridge, "
               "NODE across host bridges in a NUMA node, SYS across NUMA nodes (slowest)")


def link_cell(cell: str) -> Text:
    style = next((s for prefix, s in LINK_STYLE if cell.startswith(prefix)), "")
    return Text(f"{cell:<5}", style=style)


def link_matrix(links: List[List[str]]) -> Text:
    text = Text("       " + " ".join(f"GPU{j:<2}" for j in range(len(links))) + "\n", style="bold")
    for i, row in enumerate(links):
        text.append(f"GPU{i:<3} ", style="bold")
        for cell in row:
            text.append_text(link_cell(cell))
            text.append(" ")
        text.append("\n")
    return text


def p2p_matrix(p2p: List[List[Optional[bool]]]) -> Text:
    text = Text("       " + " ".join(f"GPU{j:<2}" for j in range(len(p2p))) + "\n", style="bold")
    for i, row in enumerate(p2p):
        text.append(f"GPU{i:<3} ", style="bold")
        for cell in row:
            text.append(*(("  -   ", "dim") if cell is None else ("  yes ", "green") if cell else ("  NO  ", "bold red")))
        text.append("\n")
    return text


class GpusPane(VerticalScroll):
    """The GPU table, the link matrix coloured by speed, peer-to-peer access and NUMA placement."""

    snapshot: reactive[Optional[Snapshot]] = reactive(None, always_update=True)

    def compose(self) -> ComposeResult:
        yield DataTable(id="gpu-table", zebra_stripes=True)
        yield Label("Links between GPUs", classes="section-title")
        yield Static(id="links")
        yield Label("Peer-to-peer access", classes="section-title")
        yield Static(id="p2p")
        yield Label("NUMA", classes="section-title")
        yield Static(id="numa")

    def on_mount(self) -> None:
        self.query_one("#gpu-table", DataTable).add_columns("GPU", "name", "arch", "memory", "PCIe", "NVLink", "NUMA",
                                                           "CPUs", "persist.", "MIG", "ECC")
        self.watch_snapshot()

    def watch_snapshot(self) -> None:
        if not self.is_mounted:
            return
        snap = self.snapshot
        table = self.query_one("#gpu-table", DataTable)
        table.clear()
        if snap is None:
            return
        from envdoctor.present.facts import gib, show, sm
        from envdoctor.snapshot import known_list, present

        for g in known_list(snap.gpus):
            pcie = (f"gen {show(g.pcie.gen)}/{show(g.pcie.max_gen)} x{show(g.pcie.width)}/{show(g.pcie.max_width)}"
                    if present(g.pcie) else show(g.pcie))
            degraded = present(g.pcie) and (g.pcie.gen != g.pcie.max_gen or g.pcie.width != g.pcie.max_width)
            nvl = (f"{g.nvlink.links_active} v{show(g.nvlink.version)}" if present(g.nvlink) and g.nvlink.links_active
                   else "-")
            table.add_row(str(g.index), show(g.name), sm(g), gib(g.memory_bytes), Text(pcie, style="yellow" if degraded else ""),
                          nvl, show(g.numa_node), show(g.cpu_affinity),
                          _flag(g.persistence_mode, bad=False), _flag(g.mig_enabled, bad=True),
                          Text(show(g.ecc_uncorrected), style="bold red" if present(g.ecc_uncorrected)
                               and g.ecc_uncorrected else ""))
        topo = snap.topology
        links = self.query_one("#links", Static)
        p2p = self.query_one("#p2p", Static)
        if not isinstance(snap.gpus, list):
            links.update(Text(f"GPUs: {show(snap.gpus)}", style="dim"))
            p2p.update("")
        elif not snap.gpus:
            links.update(Text("No NVIDIA GPUs found.", style="dim"))
            p2p.update("")
        elif not present(topo):
            links.update(show(topo))
            p2p.update("")
        else:
            matrix = link_matrix(topo.links) if topo.links else Text("no link matrix recorded", style="dim")
            matrix.append(LINK_LEGEND, style="dim")
            links.update(matrix)
            p2p.update(p2p_matrix(topo.p2p) if present(topo.p2p) and topo.p2p else show(topo.p2p))
        h = snap.host
        rows = [(f"node {n.id}", f"CPUs {show(n.cpus)}, memory {gib(n.memory_bytes)}") for n in h.numa_nodes] \
            if present(h.numa_nodes) else [("NUMA nodes", show(h.numa_nodes))]
        rows.append(("this process may run on", show(h.process_cpus)))
        self.query_one("#numa", Static).update(facts_table(rows))


def _flag(value: Any, bad: bool) -> Text:
    from envdoctor.present.facts import show
    from envdoctor.snapshot import present

    if not present(value):
        return Text(show(value) if value is not None else "-", style="dim")
    return Text("on" if value else "off", style="bold red" if bool(value) == bad else "green")


def finding_detail(f: Finding) -> Text:
    text = Text()
    text.append_text(severity_text(f.severity))
    text.append(f" {f.id}  ", style="bold")
    text.append(f"({word(f.category)})\n", style="dim")
    text.append(f.title + "\n\n", style="bold")
    text.append(f.detail + "\n\n")
    text.append("Fix: ", style="bold green")
    text.append(f.fix + "\n")
    text.append(f"this fix: {word(f.safety)}\n", style="dim")
    for c in f.commands:
        text.append("  $ " + " ".join(c) + "\n", style="cyan")
    if f.subjects:
        text.append("\nAbout: " + ", ".join(f.subjects) + "\n", style="dim")
    if f.references:
        text.append("\nReferences:\n", style="bold")
        for ref in f.references:
            text.append(f"  {ref}\n", style="underline")
    return text


def fix_wishes(f: Finding) -> Optional[Dict[str, Optional[str]]]:
    """The Fix-pane wishes for a finding whose safe fix is `envdoctor fix ...` (None: not one the Fix pane applies)."""
    if f.remedy.applicability != "safe" or f.remedy.action != "envdoctor_fix":
        return None
    return {"deepspeed": wishes(f.remedy).get("deepspeed")}


class FindingsPane(Horizontal):
    """Severity-sorted findings; the highlighted one's detail, fix and references beside it."""

    findings: reactive[Optional[List[Finding]]] = reactive(None, always_update=True)
    ENTRY = "#finding-list"

    def compose(self) -> ComposeResult:
        yield OptionList(id="finding-list")
        with VerticalScroll(id="finding-detail"):
            yield Static(id="finding-text")
            yield Button("Plan this fix", id="fix-finding", variant="primary")

    def on_mount(self) -> None:
        self.watch_findings()

    def watch_findings(self) -> None:
        if not self.is_mounted:
            return
        ol = self.query_one("#finding-list", OptionList)
        ol.clear_options()
        if self.findings is None:
            self._detail(None, "The findings appear when every probe has answered.")
            return
        if not self.findings:
            self._detail(None, "No findings: every rule is quiet for this machine.")
            return
        for i, f in enumerate(self.findings):
            prompt = severity_text(f.severity)
            prompt.append(f" {f.id} ", style="bold")
            prompt.append(f.title)
            ol.add_option(Option(prompt, id=str(i)))
        ol.highlighted = 0

    def _detail(self, f: Optional[Finding], text: str = "") -> None:
        self.query_one("#finding-text", Static).update(finding_detail(f) if f else Text(text, style="dim"))
        self.query_one("#fix-finding", Button).display = bool(f and fix_wishes(f))

    def select(self, finding_id: str) -> None:
        for i, f in enumerate(self.findings or []):
            if f.id == finding_id:
                self.query_one("#finding-list", OptionList).highlighted = i
                return

    @property
    def current(self) -> Optional[Finding]:
        hi = self.query_one("#finding-list", OptionList).highlighted
        return self.findings[hi] if self.findings and hi is not None and hi < len(self.findings) else None

    @on(OptionList.OptionHighlighted, "#finding-list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._detail(self.current)

    @on(Button.Pressed, "#fix-finding")
    def _fix(self) -> None:
        if self.current is not None:
            self.post_message(msg.FixFinding(self.current))
