"""Plan a fix: the PyTorch (and DeepSpeed) install that runs on a machine, with the exact commands.

One pipeline for the CLI (`fix`) and the TUI (the Fix tab): wheel index -> torch index base -> wishes -> plan ->
commands, for this machine or (retargeted) another one's GPUs and driver. `PlanResult.to_json()` is the
`envdoctor.plan/1` document.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Tuple

if TYPE_CHECKING:
    from envdoctor.findings import Finding
    from envdoctor.knowledge import Knowledge
    from envdoctor.rules.tables import Tables
    from envdoctor.snapshot import Snapshot
    from envdoctor.wheels.index import WheelIndex
    from envdoctor.wheels.planner import MachineFacts, Plan
    from envdoctor.wheels.release_files import TorchBuild
    from envdoctor.wheels.target import Target

TARGET_NOTE = ("planned for the target's GPUs and driver: the GPU check runs at the first `envdoctor check` there "
               "(this machine's GPUs are not the target's)")


@dataclass(frozen=True)
class FixSetup:
    """What a fix needs from the settings (`Settings.fix_setup()` builds it at the edge): the wheel index (loaded
    when the plan is made), where the install state lives, uv or pip, and ENVDOCTOR_TORCH_INDEX."""

    wheel_index: Callable[[], WheelIndex]
    state_root: Path
    writable_state_root: Callable[[], Path]
    use_uv: bool = True
    torch_index: Optional[str] = None
    knowledge: Optional[Callable[[], Knowledge]] = None  # the rules the diagnosis is made with (None: torch plan only)
    probe: Optional[Callable[[str], Snapshot]] = None  # a fresh snapshot of an interpreter (the verifier's check)
    release_mirror: Optional[str] = None  # ENVDOCTOR_RELEASE_MIRROR: the host of release wheels outside the index


@dataclass(frozen=True)
class FixWishes:
    """What the user asked for, as `fix` takes it: torch versions (None: any), DeepSpeed (None: not wanted, ''
    any version), the Python version to plan for (a snapshot from elsewhere) and --index-base."""

    torch: Optional[str] = None
    deepspeed: Optional[str] = None
    python_version: Optional[str] = None
    index_base: Optional[str] = None
    only: Tuple[str, ...] = ()  # --only ID: the steps (step or finding ids) to run, the others skipped
    skip: Tuple[str, ...] = ()  # --skip ID
    index_base_name: str = "--index-base"  # what the messages call index_base (the TUI: its box)


@dataclass(frozen=True)
class PlanResult:
    """The plan with its commands, the snapshot it was made for (retargeted for another machine), the interpreter
    its commands run (None: a snapshot taken elsewhere), the torch index base, the other machine (None: this one)
    and, once `report_installs` ran, everything pip would install."""

    plan: Plan
    snapshot: Snapshot
    python: Optional[str]
    index_base: str
    target: Optional[Target] = None
    installs: Optional[List[Dict[str, Any]]] = None
    install_notes: List[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        return self.plan.status

    def exit_code(self) -> int:
        """1 when no install can run here (`impossible`), else 0."""
        return 1 if self.plan.status == "impossible" else 0

    def to_json(self) -> Dict[str, Any]:
        doc = self.plan.to_json()
        if self.target is not None:
            doc["target"] = self.target.to_json()
            doc["notes"].append(TARGET_NOTE)
        if self.installs is not None:
            doc["installs"] = list(self.installs)
            doc["notes"] += self.install_notes
        return doc


def torch_index_base(option: Optional[str], configured: Optional[str], default: str,
                     option_name: str = "--index-base") -> str:
    """The PyTorch wheel index to plan and install from: `option` (--index-base, or what `option_name` names),
    else `configured` (ENVDOCTOR_TORCH_INDEX), else the wheel index's default; each checked, the error naming
    where it came from."""
    from envdoctor.install.indexes import TORCH_INDEX_ENV
    from envdoctor.install.resolve import check_index_url

    if option:
        return check_index_url(option, option_name)
    if configured:
        return check_index_url(configured, TORCH_INDEX_ENV)
    return check_index_url(default, "the wheel index's default_index_base")


def other_machine(snapshot: Optional[Snapshot] = None, source: str = "", gpu: Optional[str] = None,
                  driver: Optional[str] = None, count: Optional[int] = None,
                  name: Optional[str] = None) -> Optional[Target]:
    """The machine to plan for instead of this one: a snapshot taken there (`source`: its file), or GPUs of the
    compute capabilities `gpu` with `driver`; None when neither is given."""
    from envdoctor.wheels import target

    if snapshot is not None:
        return target.from_snapshot(snapshot, source)
    if gpu:
        return target.from_options(gpu, driver, count, name)
    return None


def plan_fix(snapshot: Snapshot, setup: FixSetup, wishes: FixWishes, python: Optional[str],
             target: Optional[Target] = None) -> PlanResult:
    """The plan for `snapshot` (of the environment at `python`; None: a snapshot taken elsewhere, whose own
    interpreter the commands name) with its commands. `target`: plan for that machine's GPUs and driver with this
    environment. InputError on a bad index, index base or wish."""
    from envdoctor.install.preview import attach_commands
    from envdoctor.wheels.planner import facts_from_snapshot, plan
    from envdoctor.wheels.steps import gather, select
    from envdoctor.wheels.wishes import Wishes

    if target is not None:
        from envdoctor.wheels.target import retarget

        snapshot = retarget(snapshot, target)
    index = setup.wheel_index()
    base = torch_index_base(wishes.index_base, setup.torch_index, index.default_index_base, wishes.index_base_name)
    # The diagnosis of this environment: every applicable fix becomes a step (another machine's plan: torch only).
    know = setup.knowledge() if setup.knowledge is not None and target is None else None
    findings = diagnosis(snapshot, know, python)
    the_plan = plan(snapshot, index, Wishes.from_options(wishes.torch, wishes.deepspeed, wishes.python_version, base))
    if know is not None:
        gather(the_plan, findings, facts_from_snapshot(snapshot, wishes.python_version), index, base)
        unknown = select(the_plan, wishes.only, wishes.skip)
        if unknown:
            from envdoctor.errors import InputError

            ids = ", ".join(s.id for s in the_plan.steps) or "none"
            raise InputError(f"--only/--skip {unknown[0]!r} names no step of this plan (its steps: {ids})")
        if python:
            choose_extension_builds(the_plan, python, snapshot, know.tables, setup.release_mirror)
    attach_commands(the_plan, snapshot, python, setup.state_root, setup.use_uv)
    return PlanResult(the_plan, snapshot, python, base, target)


def diagnosis(snapshot: Snapshot, know: Optional[Knowledge], python: Optional[str]) -> List[Finding]:
    """The findings of `check` on the snapshot ([] without the rules: a torch plan only)."""
    from envdoctor.usecases.check import check

    if know is None:
        return []
    return check(snapshot, know, python=python).findings


def choose_extension_builds(the_plan: Plan, python: str, snapshot: Snapshot, tables: Tables,
                            mirror: Optional[str] = None) -> None:
    """Each extension step: the release wheel the extension published for the torch kept or planned
    (extension_wheels.json: flash-attn's), else the release built for it on the user's index (pip's resolver,
    torch held), else a rebuild without build isolation (unsafe: it compiles)."""
    import dataclasses
    import os

    from envdoctor.install.preview import extension_release
    from envdoctor.snapshot import present
    from envdoctor.wheels.planner import facts_from_snapshot
    from envdoctor.wheels.release_files import release_file
    from envdoctor.wheels.steps import make_rebuild, make_release, make_release_file, settle

    torch = the_plan.torch
    held = [torch.pin] if torch else []
    facts = facts_from_snapshot(snapshot)
    build = torch_build(the_plan, facts, tables)
    glibc = snapshot.host.glibc if present(snapshot.host.glibc) and isinstance(snapshot.host.glibc, str) else None
    build = dataclasses.replace(build, glibc=glibc) if build else None
    for step in the_plan.steps:
        if step.kind != "extension" or step.status != "planned" or step.rebuilds:
            continue  # a rebuild already chosen (ED309: no release has kernels for the GPU)
        installed = snapshot.package(step.subject)
        installed = installed if isinstance(installed, str) else None
        no_file = ""
        if any(r.extension == step.subject for r in tables.extension_wheels):
            found, no_file = (release_file(tables.extension_wheels, step.subject, build, facts.python, facts.platform,
                                           installed, mirror) if build else
                              (None, "torch's release and build are unknown"))
            if found is not None:
                make_release_file(step, found.release, found.url, build.version)
                continue
        version, why = extension_release(python, step.subject, held, os.environ,
                                         [torch.index_url] if torch and torch.index_url else [])
        if version:
            make_release(step, version)
        else:
            make_rebuild(step, installed, f"{no_file}; {why}" if no_file else why)
    settle(the_plan)


def torch_build(the_plan: Plan, facts: MachineFacts, tables: Tables) -> Optional[TorchBuild]:
    """The torch the extensions must fit: the one the plan installs (its C++ ABI that of PyTorch's binaries of its
    release and variant, torch_cxx11_abi.json), else the one in place (its own ABI where the probe read it, else
    PyTorch's for a build of PyTorch's index, named by its +cpu / +cuXXX); None when no torch is known."""
    from envdoctor.compat import variant_cuda
    from envdoctor.wheels.release_files import TorchBuild

    planned = the_plan.torch
    if planned is not None:
        row = tables.torch_abi(planned.version, planned.variant)
        return TorchBuild(planned.version, variant_cuda(planned.variant), row.cxx11_abi if row else None)
    if not facts.torch_version:
        return None
    abi = facts.torch_cxx11_abi
    local = facts.torch_version.partition("+")[2].lower()
    if abi is None and (local == "cpu" or local.startswith("cu")):
        row = tables.torch_abi(facts.torch_version.partition("+")[0], local)
        abi = row.cxx11_abi if row else None
    return TorchBuild(facts.torch_version, facts.torch_cuda, abi, facts.torch_cuda_unknown)


@dataclass(frozen=True)
class Resolved:
    """What pip would install for a plan: each file {name, version, url, hashed, requested, hashes}, notes (links
    it could not read) and the package index it resolved against (None: pip's default)."""

    installs: List[Dict[str, Any]]
    notes: List[str]
    pip_index: Optional[str]


def resolve_files(the_plan: Plan, python: str, environ: Mapping[str, str], pip_index: Optional[str],
                  from_scratch: bool = False) -> Resolved:
    """Every file pip would install for the plan in `python`'s environment, dependencies included; `pip_index`:
    PIP_INDEX_URL as configured (None: pip's own config); `from_scratch`: as if nothing were installed (a lock
    names everything)."""
    from envdoctor.install.preview import install_report
    from envdoctor.probes.pip_config import pip_index_url

    env = {**environ, "PIP_IGNORE_INSTALLED": "1"} if from_scratch else environ
    index = pip_index_url(pip_index, python)
    installs, notes = install_report(the_plan, python, env, index)
    return Resolved(installs, notes, index)


def way_out_through(message: str, control: str) -> str:
    """A message of a fix with the way out of an unreachable PyTorch index naming `control` (the TUI's box)
    instead of --index-base."""
    from envdoctor.install.resolve import way_out_through as reworded

    return reworded(message, control)


def check_torch_index(planned: PlanResult) -> PlanResult:
    """The result with the note `fix --dry-run` gives (report_installs' first check) when the PyTorch index its
    install downloads from does not answer; unchanged for a plan that installs nothing here."""
    from envdoctor.install.preview import unreachable_index

    if not planned.python or planned.plan.status != "planned":
        return planned
    stop = unreachable_index(planned.plan)
    return replace(planned, install_notes=[*planned.install_notes, stop]) if stop else planned


def report_installs(planned: PlanResult, environ: Mapping[str, str], pip_index: Optional[str]) -> PlanResult:
    """The result with everything pip would install (when there is an install to run in a known interpreter)."""
    if not planned.python or planned.plan.status != "planned":
        return planned
    got = resolve_files(planned.plan, planned.python, environ, pip_index)
    return replace(planned, installs=got.installs, install_notes=got.notes)
