"""The markdown report: facts, findings and probe records, with secrets always removed and, unless
asked otherwise, host names, user names, home paths and addresses too."""

from __future__ import annotations

import getpass
import os
import re
from typing import Any, List, Optional, Sequence, Set

from envdoctor import __version__
from envdoctor.findings import Finding, summary
from envdoctor.present.facts import fact_groups, show
from envdoctor.present.terminal import printable
from envdoctor.present.words import word
from envdoctor.redact import scrub_identity, scrub_secrets
from envdoctor.snapshot import Snapshot, present


def _identities(snap: Snapshot) -> Set[str]:
    names: Set[str] = set()
    if present(snap.host.hostname):
        names.add(str(snap.host.hostname))
        names.add(str(snap.host.hostname).split(".")[0])
    return names


def _users(snap: Snapshot) -> Set[str]:
    users: Set[str] = set()
    for text in (snap.python.executable, snap.torch.path if present(snap.torch) else None):
        m = re.search(r"/(?:home|Users)/([^/]+)/", str(text or ""))
        if m:
            users.add(m.group(1))
    try:
        users.add(getpass.getuser())
    except (KeyError, OSError):
        pass
    for var in ("USER", "LOGNAME", "SUDO_USER"):
        if os.environ.get(var):
            users.add(os.environ[var])
    return {u for u in users if u not in ("root",)}


def _cell(text: str) -> str:
    """A table cell stays one cell: secrets out first (a key spans lines), pipes escaped, line breaks as <br>."""
    return "<br>".join(scrub_secrets(str(text)).replace("|", "\\|").splitlines())


def _item(text: str) -> str:
    """A list item's further lines stay inside the item."""
    return "\n    ".join(scrub_secrets(str(text)).splitlines())


def render_report(snap: Snapshot, findings: Sequence[Finding], redact: bool = True, *, plan: Any = None,
                  selftests: Sequence[Any] = (), diagnosis: Any = None) -> str:
    """The report; the TUI adds what it shows besides: the install `plan` (wheels.planner.Plan), the `selftests`
    it ran (selftest.result.TestResult) and the `diagnosis` of a pasted or opened text it made
    (usecases.diagnose_text.DiagnoseResult)."""
    s = summary(findings)
    lines: List[str] = [
        "## envdoctor report",
        "",
        f"envdoctor {__version__}, snapshot taken {snap.created}. "
        f"**{s['errors']} error(s), {s['warnings']} warning(s), {s['infos']} info(s).**",
        "",
    ]
    if findings:
        lines += ["### Findings", ""]
        for f in findings:
            lines.append(f"- **{f.severity.upper()} {f.id}** {' '.join(f.title.splitlines())}")
            lines.append(f"  - {_item(f.detail)}")
            lines.append(f"  - fix: {_item(f.fix)}")
        lines.append("")
    lines += _plan_lines(plan) + _selftest_lines(selftests) + _diagnosis_lines(diagnosis)
    lines += ["### Machine", ""]
    for title, items in fact_groups(snap):
        lines += [f"**{title}**", "", "| | |", "|---|---|"]
        for label, value in items:
            lines.append(f"| {' '} | `{_cell(value)}` |" if label == "" else f"| {_cell(label)} | {_cell(value)} |")
        lines.append("")
    lines += ["### Probes", "", "| probe | status | seconds | note |", "|---|---|---|---|"]
    for p in snap.probes:
        lines.append(f"| {_cell(p.name)} | {_cell(p.status)} | {show(p.seconds)} | {_cell(p.error or '')} |")
    text = printable(scrub_secrets("\n".join(lines) + "\n"))
    if redact:
        text = scrub_identity(text, hostnames=_identities(snap) | _log_hosts(diagnosis), users=_users(snap))
    return text


def _log_hosts(report: Optional[Any]) -> Set[str]:
    """The host names the NCCL log's lines carry ("node7:1234:1240 [0] NCCL INFO ..."): the other nodes of the job,
    which the snapshot does not name."""
    from envdoctor.nccl.facts import HOST_PREFIX

    if report is None:
        return set()
    names: Set[str] = set()
    for fd in report.findings:
        for line in fd.evidence:
            names.update(m.group(1) for m in HOST_PREFIX.finditer(str(line)))
    return names | {n.split(".")[0] for n in names}


def _plan_lines(plan: Any) -> List[str]:
    if plan is None:
        return []
    lines = ["### Install plan", "", f"**{word(plan.status)}**" + (f": {plan.reason}" if plan.reason else ""), ""]
    for p in plan.packages:
        lines.append(f"- install `{p.pin}` from {p.index_url or 'your pip index'}: {p.reason}"
                     + (f" ({word(p.status)})" if p.status != "verified" else ""))
    lines += [f"- keep {k}" for k in plan.kept] + [f"- upgrade: {u}" for u in plan.upgrade]
    lines += [f"- note: {n}" for n in plan.notes]
    if plan.commands:
        lines += ["", "```"] + [" ".join(c) for c in plan.commands] + ["```"]
    return lines + [""]


def _selftest_lines(results: Sequence[Any]) -> List[str]:
    from envdoctor.present.selftest import summary_line

    if not results:
        return []
    lines = ["### Self-tests", "", "| test | verdict | seconds | result |", "|---|---|---|---|"]
    for r in results:
        what = summary_line(r) or ((r.error or "").strip().splitlines() or [""])[0]
        lines.append(f"| {r.name} | {word(r.status)} | {r.seconds:.1f} | {what.replace('|', '/')} |")
    return lines + [""]


def _diagnosis_lines(report: Optional[Any]) -> List[str]:
    if report is None:
        return []
    lines = ["### Diagnosis", "", f"{len(report.inputs)} input(s), {report.lines} line(s).", ""]
    kinds = list(dict.fromkeys(s.kind for s in getattr(report, "sections", ()) or ()))
    if kinds:
        lines += [f"Report sections read: {', '.join(kinds)}.", ""]
    if not report.failed:
        lines += ["No recognisable failure in the input.", ""]
    for n, fd in enumerate(report.findings, 1):
        label = "most likely root cause" if n == 1 and report.failed else ("also possible" if report.failed else "warning")
        lines.append(f"{n}. **{fd.title}** ({label}, {fd.confidence} confidence, {fd.id})")
        lines += [f"   - evidence: `{line}`" for line in fd.evidence[:3]]
        lines.append(f"   - fix: {fd.fix}")
    return lines + [""]
