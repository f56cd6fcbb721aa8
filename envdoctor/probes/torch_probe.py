"""torch and DeepSpeed, each probed in a child process of the target interpreter.

A torch that cannot import, hangs, or segfaults on import is a fact about the machine: it is recorded
in the snapshot (`torch.importable = false` with the error), and envdoctor carries on. This module starts
the child; `torch_sections` reads what it printed.
"""

from __future__ import annotations

from envdoctor.probes.base import ProbeContext, ProbeOutput
from envdoctor.probes.children_run import run_child_lines


def probe(ctx: ProbeContext) -> ProbeOutput:
    """torch first, then DeepSpeed from the same child (it imports torch, already loaded there)."""
    objects, res = run_child_lines(ctx, "torch_child.py", ctx.torch_timeout)
    from envdoctor.probes.torch_sections import sections_from_child  # loads the snapshot's types: after the spawn

    return sections_from_child(ctx, objects, res)
