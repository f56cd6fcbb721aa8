"""Apply a fix: carry out a plan in its interpreter, verified in a fresh one, rolled back on any failure.
`ApplyResult.to_json()` is the `envdoctor.plan/1` document with the installer's status, commands and message."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence

from envdoctor.errors import InputError
from envdoctor.install.state import EnvStateError
from envdoctor.snapshot import known_list, present

if TYPE_CHECKING:
    from envdoctor.findings import Finding
    from envdoctor.install.installer import Outcome
    from envdoctor.usecases.plan_fix import FixSetup, PlanResult
    from envdoctor.wheels.steps import FixStep

__all__ = ["ApplyResult", "EnvStateError", "apply_fix", "refuse_unsafe", "still_found", "verified_capabilities"]


@dataclass(frozen=True)
class ApplyResult:
    """The plan carried out: what the installer did (`outcome`: before and after versions too)."""

    planned: PlanResult
    outcome: Outcome

    @property
    def status(self) -> str:
        """installed | rolled_back | nothing_to_do"""
        return self.outcome.status

    @property
    def commands(self) -> List[List[str]]:
        return self.outcome.commands

    @property
    def message(self) -> str:
        return self.outcome.message

    @property
    def rollback_ok(self) -> Optional[bool]:
        return self.outcome.rollback_ok

    def exit_code(self) -> int:
        """3 when the install failed and was rolled back, else 0."""
        return 3 if self.status == "rolled_back" else 0

    def to_json(self) -> Dict[str, Any]:
        doc = self.planned.to_json()
        doc["status"] = self.status
        doc["commands"] = self.commands
        doc["message"] = self.message
        doc["rollback_ok"] = self.rollback_ok
        return doc


def verified_capabilities(planned: PlanResult) -> List[str]:
    """The compute capabilities torch is verified on after the install: this machine's GPUs, none for a plan made
    for another machine (its GPUs are not here)."""
    if planned.target is not None:
        return []
    return [str(g.compute_capability) for g in known_list(planned.snapshot.gpus) if present(g.compute_capability)]


def refuse_unsafe(planned: PlanResult, unsafe: bool) -> None:
    """InputError (exit 2, nothing changed) when a step that compiles is planned and --unsafe (the TUI: a
    confirmation) was not given."""
    from envdoctor.wheels.steps import unsafe_steps

    risky = unsafe_steps(planned.plan)
    if risky and not unsafe:
        names = ", ".join(f"{s.id} ({' '.join(s.installs)})" for s in risky)
        raise InputError(f"the plan has unsafe steps, rebuilds that compile against the torch in place: {names}; pass "
                         f"--unsafe to run them, or --skip {risky[0].id.split(':', 1)[0]}; nothing was changed")


def still_found(steps: Sequence[FixStep], findings: Sequence[Finding]) -> List[str]:
    """What the planned steps promised and a fresh check contradicts: each finding a step answers that is found
    again (for a step about one package, on that package)."""
    out = []
    for step in steps:
        if step.status not in ("planned", "covered"):
            continue
        for fid in step.findings:
            for f in findings:
                if f.id != fid:
                    continue
                if step.subject and step.kind in ("companion", "extension") and \
                        not any(step.subject in s for s in f.subjects) and step.subject not in f.title:
                    continue
                out.append(f"step {step.id}: {f.id} is still found after the install ({f.title})")
                break
    return out


def apply_fix(planned: PlanResult, setup: FixSetup, progress: Callable[[str], None],
              break_system_packages: bool = False, live: Optional[Callable[[str], None]] = None,
              unsafe: bool = False) -> ApplyResult:
    """Install `planned` into its interpreter; `progress` hears each step (and pip's output), `live` the
    download's progress line. Afterwards a fresh check of the interpreter must no longer find what each step
    answers, else everything is rolled back. InputError: an unsafe step without `unsafe` (nothing was done);
    EnvStateError (an InputError): busy or half-changed, nothing was done."""
    from envdoctor.install.installer import execute

    if not planned.python:
        raise InputError("this plan is for a snapshot taken elsewhere: it cannot be applied here")
    refuse_unsafe(planned, unsafe)
    python = planned.python
    promised = None
    steps = [s for s in planned.plan.steps if s.findings and s.status in ("planned", "covered")]
    if steps and setup.probe is not None and setup.knowledge is not None and planned.target is None:
        from envdoctor.usecases.check import check

        knowledge, probe = setup.knowledge, setup.probe

        def promised() -> List[str]:
            return still_found(steps, check(probe(python), knowledge(), python=python).findings)

    more = {"promised": promised} if promised is not None else {}
    outcome = execute(planned.plan, python, verified_capabilities(planned), progress,
                      setup.writable_state_root(), setup.use_uv, break_system_packages=break_system_packages, live=live,
                      **more)
    return ApplyResult(planned, outcome)
