"""The markdown report: facts, findings and probe records, with secrets always removed and, unless
asked otherwise, host names, user names, home paths and addresses too."""

from __future__ import annotations

import getpass
import os
import re
from typing import List, Sequence, Set

from envdoctor import __version__
from envdoctor.findings import Finding, summary
from envdoctor.present.facts import fact_groups, show
from envdoctor.present.terminal import printable
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


def render_report(snap: Snapshot, findings: Sequence[Finding], redact: bool = True) -> str:
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
        text = scrub_identity(text, hostnames=_identities(snap), users=_users(snap))
    return text
