"""Self-test verdicts as text: the one-line gist (CLI and TUI) and the `envdoctor selftest` report."""

from __future__ import annotations

from typing import List

from envdoctor.byte_sizes import format_bytes
from envdoctor.findings import sort_findings
from envdoctor.present.findings import render_findings
from envdoctor.present.style import Style
from envdoctor.selftest.result import TestResult

_LABEL = {"passed": ("PASSED", "green"), "failed": ("FAILED", "red"), "skipped": ("SKIPPED", "yellow")}


def summary_line(r: TestResult) -> str:
    """The one-line gist of a TestResult (text report and TUI)."""
    m = r.metrics
    if r.status != "passed":
        return ""
    if r.name == "allreduce" and m.get("busbw_gbps"):
        size = max(m["busbw_gbps"], key=int)
        if m["world_size"] > 1:
            text = f"{m['world_size']} ranks, {m['backend']}: busbw {m['busbw_gbps'][size]:.2f} GB/s at {_size(int(size))}"
        else:  # busbw = algbw * 2(n-1)/n is 0 for one rank
            text = f"1 rank, {m['backend']}: algbw {m['algbw_gbps'][size]:.2f} GB/s at {_size(int(size))} (no data moves)"
        if m.get("expected_busbw_gbps"):
            text += f" (links: ~{m['expected_busbw_gbps']:.0f} GB/s, {m.get('expected_path')})"
        if m.get("ddp"):
            text += "; DDP gradients " + ("identical on every rank" if m["ddp"].get("grads_identical") else "DIFFER")
        return text
    if r.name == "backward" and m.get("speedup"):
        text = (f"batch {m['batch']}: loop {m['looped_seconds']:.3f}s, non-scalar {m['batched_seconds']:.3f}s "
                f"(x{m['speedup']:.2f}), max rel grad diff {m['max_rel_grad_diff']:.1e}")
        ds = m.get("deepspeed") or {}
        if ds.get("status"):
            text += f"; DeepSpeed {ds['status']}" + (f" ({ds.get('reason')})" if ds.get("reason") else "")
        return text
    if r.name == "compile" and m.get("compile_seconds") is not None:
        return (f"{m.get('device')}: compiled in {m['compile_seconds']:.1f}s, output diff {m.get('max_rel_out_diff', 0):.1e}, "
                f"grad diff {m.get('max_rel_grad_diff', 0):.1e}")
    if r.name == "zero3" and m.get("step_seconds"):
        return zero3_line(m)
    if r.name == "gpu" and m.get("devices"):
        return "; ".join(f"{d['device']} " + ", ".join(f"{k} {v:.1f} TFLOP/s" for k, v in d["tflops"].items() if v)
                         for d in m["devices"])
    return ""


def zero3_line(m: dict) -> str:
    steps = m["step_seconds"]
    text = f"{m.get('accelerator')}: step {steps.get('zero3', 0):.3f}s, offload cpu {steps.get('offload_cpu', 0):.3f}s"
    if "offload_nvme" in steps:
        text += f", nvme {steps['offload_nvme']:.3f}s"
    if m.get("rel_update_diff") is not None:
        text += f"; vs torch Adam: update {m['rel_update_diff']:.1e}, loss {m['max_rel_loss_diff']:.1e}"
    ops = ", ".join(f"{o['name']} {o['cache']} {o['seconds']:.1f}s" for o in m.get("ops") or [])
    if ops:
        text += f"; ops {ops}"
    nvme = m.get("nvme") or {}
    if nvme.get("status") == "passed":
        text += f"; swap write {nvme['write_gbps']:.2f} GB/s, read {nvme['read_gbps']:.2f} GB/s"
    elif nvme.get("status") == "skipped":
        text += f"; NVMe skipped ({nvme.get('reason')})"
    fit = m.get("fit") or {}
    if fit.get("max_params"):
        text += f"; fits ~{fit['max_params'] / 1e9:.1f}B params with offload"
    return text


def _size(n: int) -> str:
    return format_bytes(n)


def render_results(results: List[TestResult], style: Style) -> str:
    lines = []
    for r in results:
        label, colour = _LABEL[r.status]
        head = f"{style(label.ljust(7), colour)} {style(r.name.ljust(9), 'bold')} {r.seconds:6.1f}s  {summary_line(r)}"
        lines.append(head.rstrip())
        if r.error:
            why = "why" if r.status == "skipped" else "error"
            err = r.error.strip().splitlines()
            lines.append(f"        {why}: {err[0]}")
            lines.extend(f"          {ln}" for ln in err[1:8])
        if r.log:
            lines.append(f"        log kept: {r.log}")
    findings = sort_findings([f for r in results for f in r.findings])
    counts = {s: sum(r.status == s for r in results) for s in ("passed", "failed", "skipped")}
    out = "\n".join(lines) + "\n"
    if findings:
        out += "\n" + render_findings(findings, style)
    out += f"\n{counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped\n"
    return out
