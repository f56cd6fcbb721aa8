"""The text of a plan (`envdoctor fix`), and of what applying it did."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any, Dict, List, Set, Union

from envdoctor.present.words import word

if TYPE_CHECKING:
    from envdoctor.usecases.apply_fix import ApplyResult
    from envdoctor.usecases.plan_fix import PlanResult


def render_plan(result: Union[PlanResult, ApplyResult]) -> str:
    """The plan (or what applying it did) as text: each package with its reason, what pip installs, the notes,
    the rejected candidates and the exact commands."""
    doc = result.to_json()
    lines = [f"plan: {word(doc['status'])} - {doc.get('reason', '')}"]
    lines += _steps(doc.get("steps") or [], set(doc.get("files") or []))
    for p in doc["packages"]:
        lines.append(f"  install {p['pin']}" + (f"  from {p['index_url']}" if p["index_url"] else "  from your pip index"))
        lines.append(f"    because {p['reason']}" + (f" [{word(p['status'])}]" if p["status"] != "verified" else ""))
    if doc.get("installs"):
        lines.append("  pip will install (with the dependencies):")
        for i in doc["installs"]:
            mark = "  [a release file, by itself: its host publishes no hash]" if i.get("release_file") else \
                {False: "  [no hash on the index]", None: "  [not found on an index page]"}.get(i["hashed"], "")
            lines.append(f"    {i['name']} {i['version']}{mark}")
    for k in doc.get("kept") or []:
        lines.append(f"  keep {k}")
    for u in doc.get("upgrade") or []:
        lines.append(f"  upgrade: {u}")
    for n in doc.get("notes") or []:
        lines.append(f"  note: {n}")
    ops = doc.get("deepspeed_ops")
    if ops:
        lines.append(f"  DeepSpeed ops ({'JIT at first use' if ops['build_env'].get('DS_BUILD_OPS') == '0' else 'prebuilt'}):"
                     f" nvcc {ops['nvcc'] or 'missing'}, torch CUDA {ops['torch_cuda'] or '-'}: {ops['cuda_check']['why']}")
        for name, op in ops["ops"].items():
            lines.append(f"    {name:<12} {'[OKAY]' if op['buildable'] else '[NO]  '} {op['why']}")
    rej = doc.get("rejected") or []
    if rej:
        lines.append(f"  rejected ({len(rej)}):")
        for r in rej[:12]:
            lines.append(f"    {r['name']} {r['version']} {r['variant']}: {r['why']}")
        if len(rej) > 12:
            lines.append(f"    ... {len(rej) - 12} more (--json lists all)")
    if doc["commands"]:
        lines.append("  commands:")
        for c in doc["commands"]:
            lines.append("    " + " ".join(_quote(a) for a in c))
    if doc.get("env"):
        lines.append("  with environment: " + " ".join(f"{k}={v}" for k, v in doc["env"].items()))
    if doc.get("message"):
        lines.append(f"  {doc['message']}")
    return "\n".join(lines) + "\n"


_STEP_STATES = {"planned": "", "cannot_plan": "CANNOT BE PLANNED: ", "skipped": "skipped: ", "covered": "covered: "}


def _steps(steps: List[Dict[str, Any]], files: Set[str]) -> List[str]:
    """Each step of the fix with the findings it answers, what it installs, its safety and, when it does not
    run, why."""
    if not steps:
        return []
    lines = ["  steps (each finding must be gone afterwards, else everything is rolled back):"]
    for s in steps:
        answers = ", ".join(s["findings"]) or "no finding (asked for)"
        what = " ".join(_quote(i) for i in s["installs"]) or "-"
        by_file = bool(files.intersection(s["installs"]))  # a release file: installed as it is, without resolution
        held = " by its file, without its dependencies" if by_file else \
            " with torch held" if s["kind"] in ("requirements", "extension") and s["status"] == "planned" else ""
        unsafe = "  [UNSAFE: compiles; needs --unsafe]" if s["applicability"] == "unsafe" else ""
        lines.append(f"    [{s['id']}] {s['kind']} for {answers}: {what}{held}{unsafe}")
        lines.append(f"      {_STEP_STATES.get(s['status'], s['status'] + ': ')}{s['why'] or s['reason']}")
        if s["depends_on"]:
            lines.append(f"      after: {', '.join(s['depends_on'])}")
    return lines


def _quote(arg: str) -> str:
    return shlex.quote(arg)
