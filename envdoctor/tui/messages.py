"""Typed messages: workers and panes talk to the app only through these (messages up)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, List, Optional, Tuple

from textual.message import Message

from envdoctor.findings import Finding

if TYPE_CHECKING:
    from envdoctor.snapshot import Snapshot


@dataclass
class ProbeFinished(Message):
    """One probe finished (posted from the probe worker's thread)."""

    event: Any  # envdoctor.probes.runner.ProbeEvent


@dataclass
class ProbesDone(Message):
    snapshot: Snapshot


@dataclass
class FindingsReady(Message):
    findings: List[Finding]
    result: Any = None  # envdoctor.usecases.check.CheckResult


@dataclass
class PlanRequested(Message):
    """The Fix pane asks for a plan: `torch`, `deepspeed` and `index_base` as `fix --torch/--deepspeed/--index-base`
    take them."""

    torch: Optional[str]
    deepspeed: Optional[str]
    index_base: Optional[str] = None

    @classmethod
    def from_controls(cls, torch: str, deepspeed: bool, index_base: str = "") -> PlanRequested:
        """What the Fix tab's controls ask for: the torch version typed (blank: any), whether DeepSpeed is wanted and
        the PyTorch index base typed (blank: ENVDOCTOR_TORCH_INDEX, else the wheel index's default)."""
        return cls(torch.strip() or None, "" if deepspeed else None, index_base.strip() or None)


@dataclass
class PlanReady(Message):
    result: Any  # envdoctor.usecases.plan_fix.PlanResult, or None when planning failed
    error: Optional[str] = None


@dataclass
class ApplyRequested(Message):
    """The user pressed Apply; the app asks for confirmation before anything runs."""


@dataclass
class InstallLog(Message):
    line: str


@dataclass
class InstallDone(Message):
    outcome: Any  # envdoctor.install.installer.Outcome, or None when the install could not start
    error: Optional[str] = None


@dataclass
class SnapshotOpened(Message):
    """The palette's Open snapshot read `path`: the snapshot, or (None) the error `check --snapshot` gives for it."""

    path: str
    snapshot: Optional[Snapshot]
    error: Optional[str] = None


@dataclass
class FixFinding(Message):
    """A finding's safe fix was chosen in the Findings pane: open the Fix pane with its wishes."""

    finding: Finding


@dataclass
class DiagnoseRequested(Message):
    """The Diagnose tab asks for a diagnosis of a file (`path`) or a pasted `text`; the answer comes back to it as
    `use_case_done` (a UseCaseDone of tab "diagnose")."""

    path: Optional[str]
    text: Optional[str]


@dataclass
class SelftestRequested(Message):
    names: List[str]


@dataclass
class SelftestsSelected(Message):
    names: List[str]  # the tests the run chose once the target was probed (Run all: those that apply there)


@dataclass
class SelftestProgress(Message):
    name: str
    line: str


@dataclass
class SelftestDone(Message):
    result: Any  # envdoctor.selftest.result.TestResult


@dataclass
class SelftestsFinished(Message):
    pass


@dataclass
class UseCaseRequested(Message):
    """A pane asks for a use case to run: `use_case(*args)` in a worker; what it returns (or the InputError's text)
    comes back to the pane of `tab` as `use_case_done(result, error)`. A new tab needs no message of its own."""

    tab: str
    use_case: Callable[..., Any]
    args: Tuple[Any, ...] = ()


@dataclass
class UseCaseDone(Message):
    """What a pane's use case returned (None, with `error`, when it raised an InputError)."""

    tab: str
    result: Any
    error: Optional[str] = None
