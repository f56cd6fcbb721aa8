"""The steps of a fix: every applicable fix of a diagnosis, gathered into one plan.

A pure function over values: the findings of a `check` (their `Fix` values), the torch plan the planner made,
the machine's facts and the wheel index. Each step names the findings it answers (the verifier checks that they
are gone after the install), what it installs, how safe it is to run unattended and which step it depends on.

Kinds of step:
  torch         the planner's torch build, with its companions and DeepSpeed (`wheels.planner.plan`)
  companion     torchvision / torchaudio of the installed torch's release and build, and the Triton (triton or
                pytorch-triton) torch pins, from the index torch came from
  requirements  requirement specs (a Fix's `requirements`) that pip's resolver installs with torch held fixed
  extension     a compiled extension (xformers, flash-attn, ...): the release built for the torch in place, or, where
                the index has none, a rebuild without build isolation (unsafe: it compiles)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Sequence

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from envdoctor.findings import Finding, current_id
from envdoctor.versions import major_minor
from envdoctor.wheels.index import WheelIndex
from envdoctor.wheels.planner import MachineFacts, Plan, PlannedPackage, known_variant

TORCH_STEP = "torch"
DEEPSPEED_STEP = "deepspeed"
KINDS = ("torch", "companion", "requirements", "extension")
STATUSES = ("planned", "cannot_plan", "skipped", "covered")
COMPANIONS = ("torchvision", "torchaudio")
TRITONS = ("triton", "pytorch-triton")  # torch's CUDA builds pin one of them: its metadata says which
# Findings whose requirements are torch's own (its Requires-Dist, the NumPy it was built against, its nvidia-* pins):
# a new torch brings its own, so a torch step answers them. Others (ninja for DeepSpeed's JIT) are installed after it.
TORCH_OWN = ("requirement_conflict", "numpy_incompatible", "nvidia_wheel_mismatch")


@dataclass
class FixStep:
    """One step of a fix: what it installs and why (the findings it answers)."""

    id: str  # the finding id ("ED503"); a finding per subject adds it ("ED508:xformers"); the torch plan: "torch"
    kind: str  # one of KINDS
    findings: List[str]  # the finding ids it answers: the verifier checks each is gone afterwards
    reason: str  # why, in a line
    installs: List[str] = field(default_factory=list)  # exact pins or requirement specs
    applicability: str = "safe"  # safe | unsafe (it compiles): unsafe steps run only with --unsafe
    status: str = "planned"  # one of STATUSES
    why: str = ""  # cannot_plan / skipped / covered: why
    depends_on: List[str] = field(default_factory=list)  # step ids this step is planned on
    subject: str = ""  # the package it is about (a companion or extension name)
    packages: List[PlannedPackage] = field(default_factory=list)  # the exact pins it adds to the plan
    requirements: List[str] = field(default_factory=list)  # the specs pip resolves with torch held
    rebuilds: List[str] = field(default_factory=list)  # name==version rebuilt without build isolation
    files: List[str] = field(default_factory=list)  # URLs of release wheels from outside the index
    env: Dict[str, str] = field(default_factory=dict)  # what its install needs in the environment (a rebuild's arch list)

    def to_json(self) -> Dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "findings": list(self.findings), "reason": self.reason,
                "installs": list(self.installs), "applicability": self.applicability, "status": self.status,
                "why": self.why, "depends_on": list(self.depends_on), "subject": self.subject}


def applicable(findings: Iterable[Finding]) -> List[Finding]:
    """The findings whose fix `envdoctor fix` may apply: an `envdoctor_fix` that is safe or unsafe."""
    return [f for f in findings if f.remedy.action == "envdoctor_fix" and f.remedy.applicability in ("safe", "unsafe")]


def gather(plan: Plan, findings: Sequence[Finding], machine: MachineFacts, index: WheelIndex, base: str) -> None:
    """Set `plan.steps` from the torch plan and the applicable findings, then the plan's packages, requirements and
    rebuilds from the planned steps (`select` narrows them)."""
    found = applicable(findings)
    steps: List[FixStep] = []
    torch_pkgs = [p for p in plan.packages if p.name != "deepspeed"]
    ds_pkgs = [p for p in plan.packages if p.name == "deepspeed"]
    torch_changes = bool(plan.torch)
    if torch_pkgs or plan.status == "impossible":
        why = [f.id for f in found if "torch" in f.remedy.changes]
        steps.append(FixStep(TORCH_STEP, "torch", why, plan.reason, [p.pin for p in torch_pkgs],
                             status="planned" if plan.status != "impossible" else "cannot_plan",
                             why=plan.reason if plan.status == "impossible" else "", subject="torch",
                             packages=torch_pkgs))
    if ds_pkgs:
        why = [f.id for f in found if "deepspeed" in f.remedy.changes and "torch" not in f.remedy.changes]
        steps.append(FixStep(DEEPSPEED_STEP, "torch", why, ds_pkgs[0].reason, [p.pin for p in ds_pkgs],
                             depends_on=[TORCH_STEP] if torch_changes else [], subject="deepspeed", packages=ds_pkgs))
    claimed = {i for s in steps for i in s.findings}
    seen_ids: Dict[str, int] = {}
    for f in found:
        if f.id in claimed:
            continue
        step = _step_for(f, plan, machine, index, base, torch_changes)
        if step is None:
            continue
        n = seen_ids.get(step.id, 0)
        seen_ids[step.id] = n + 1
        if n:  # the same rule on another subject (for_each) without one in its id
            step.id = f"{step.id}#{n + 1}"
        if plan.status == "impossible" and step.status == "planned":
            step.status, step.why = "cannot_plan", f"planned on torch, which cannot be planned: {plan.reason}"
            step.depends_on = [TORCH_STEP]
        steps.append(step)
    _triton_from_torch_index(steps, plan, machine, index, base, torch_changes)
    plan.steps = steps
    settle(plan)


def _triton_from_torch_index(steps: List[FixStep], plan: Plan, machine: MachineFacts, index: WheelIndex, base: str,
                             torch_changes: bool) -> None:
    """Triton pairs with torch's build like torchvision does: a Triton spec in a requirements step (torch's own
    pin, read from its installed metadata) moves to one step that installs it from the index torch came from;
    the requirements step then depends on it (its finding is gone only when Triton is right too)."""
    step = next((s for s in steps if s.kind == "companion" and s.subject in TRITONS), None)
    for req in [s for s in steps if s.kind == "requirements" and s.status in ("planned", "covered")]:
        ours = [r for r in req.installs if _req_name(r) in TRITONS]
        if not ours:
            continue
        if step is None:
            step = _triton_step(FixStep(f"{req.id}:triton", "companion", [], req.reason, subject="triton"),
                                ours[0], plan, machine, index, base, torch_changes)
            steps.append(step)
        elif step.status != "covered":
            _triton_step(step, ours[0], plan, machine, index, base, torch_changes)  # torch's own pin is exact
        if req.status == "covered":
            continue
        req.installs = [r for r in req.installs if r not in ours]
        req.requirements = [r for r in req.requirements if r not in ours]
        if step.status != "planned":  # the other pins do not need Triton: they stay standalone, without it
            if not req.installs:
                req.status, req.why = "skipped", f"its only pin, {ours[0]}, is step {step.id}'s, which cannot run"
            continue
        req.depends_on = [*req.depends_on, step.id]
        if not req.installs:
            req.status, req.why = "covered", f"step {step.id} installs {ours[0]} from the index torch came from"


def _req_name(spec: str) -> str:
    try:
        return canonicalize_name(Requirement(spec).name)
    except InvalidRequirement:
        return ""


def _triton_step(step: FixStep, spec: str, plan: Plan, machine: MachineFacts, index: WheelIndex, base: str,
                 torch_changes: bool) -> FixStep:
    """`step` set to install the Triton of `spec` from the index of the installed torch's build (`base`/variant,
    added to the user's pip configuration as the companions are); torch's own pin names the package
    (triton or pytorch-triton) and its version, else the wheel index's pin of the release."""
    if torch_changes:
        step.depends_on = [TORCH_STEP]
        step.status, step.why = "covered", "the new torch brings the Triton it pins from its own index"
        return step
    variant, unknown = known_variant(machine)
    if variant is None:
        step.status, step.why = "cannot_plan", unknown
        return step
    try:
        req = Requirement(spec)
    except InvalidRequirement:
        step.status, step.why = "cannot_plan", f"the Triton requirement {spec!r} cannot be read"
        return step
    name, specifier = canonicalize_name(req.name), str(req.specifier)
    rel = index.release(machine.torch_version or "")
    pinned = ((rel.companions.get("triton") or {}).get("requirement") if rel is not None else None) or ""
    if name == "triton" and "*" in specifier and pinned and _same_series(specifier, pinned):
        specifier = pinned  # the wheel index read the exact pin from torch's wheel metadata
    compatible = re.fullmatch(r"~=(\d+)\.(\d+)\.\d+", specifier)
    if compatible:  # ~=3.8.0 is 3.8.*: a pin held_text and the constraints read
        specifier = f"=={compatible.group(1)}.{compatible.group(2)}.*"
    ver = specifier.lstrip("=~<>!")
    pin = f"{name}{specifier}"
    have = next((f"{n} {machine.packages[n]}" for n in TRITONS if machine.packages.get(n)), "no Triton")
    step.reason = (f"{have} installed, torch {machine.torch_version} pins {pin}: from the index torch came from")
    step.installs = [pin]
    exact = re.fullmatch(r"==[0-9][0-9A-Za-z.+]*", specifier) is not None  # one release: torch's own pin
    step.packages = [PlannedPackage(name, ver, variant, f"{base.rstrip('/')}/{variant}", step.reason, pin,
                                    "verified" if exact else "UNVERIFIED")]
    step.status, step.why = "planned", ""
    return step


def _same_series(a: str, b: str) -> bool:
    """'==3.7.*' and '==3.7.1' name the same X.Y."""
    return a.lstrip("=~<>!").split(".")[:2] == b.lstrip("=~<>!").split(".")[:2]


def _step_for(f: Finding, plan: Plan, machine: MachineFacts, index: WheelIndex, base: str,
              torch_changes: bool) -> Optional[FixStep]:
    changes = list(f.remedy.changes)
    after = [TORCH_STEP] if torch_changes else []
    if f.category == "companion_mismatch" and changes and changes[0] in COMPANIONS:
        return _companion_step(f, changes[0], plan, machine, index, base, torch_changes)
    if f.category == "compile_unready" and changes in (["triton"], ["triton-windows"]):
        # ED310 (none installed), ED313 (another release), ED318 (Windows: triton-windows, from the user's index)
        step = FixStep(f"{f.id}:{changes[0]}", "companion", [f.id], f.title, subject=changes[0], depends_on=after)
        if not f.remedy.requirements:
            step.status = "cannot_plan"
            step.why = f"which Triton torch {machine.torch_version} pins is unknown (rules/tables/triton_pins.json)"
            return step
        if changes == ["triton-windows"]:
            if torch_changes:
                step.status, step.why = "cannot_plan", ("the new torch pins another Triton: run `envdoctor fix` again "
                                                        "once it is in place")
                return step
            spec = _spec(f.remedy.requirements[0])
            step.installs, step.requirements = [spec], [spec]
            step.reason = f"no Triton installed, torch {machine.torch_version} pins Triton {spec.split('==')[-1]}"
            return step
        name = "pytorch-triton" if "pytorch-triton" in machine.packages and "triton" not in machine.packages \
            else "triton"  # the rule names Triton's release; the package is the one torch's index paired it with
        spec = _spec(f.remedy.requirements[0]).replace("triton", name, 1)
        return _triton_step(step, spec, plan, machine, index, base, torch_changes)
    if f.category == "extension_arch_unsupported" and changes:  # ED309: no release gives it kernels for this GPU
        return _arch_rebuild(FixStep(f"{f.id}:{changes[0]}", "extension", [f.id], f.title, depends_on=after,
                                     subject=changes[0]), machine)
    if f.category == "extension_torch_mismatch" and changes:
        name = changes[0]
        return FixStep(f"{f.id}:{name}", "extension", [f.id], f.title, [name], applicability="safe",
                       depends_on=after, subject=name, requirements=[name])
    if f.remedy.requirements:
        specs = [_spec(r) for r in f.remedy.requirements]
        if torch_changes and f.category in TORCH_OWN:  # the new torch brings its own: its step answers the finding
            return FixStep(f.id, "requirements", [f.id], f.title, specs, status="covered",
                           why="the torch step installs a new torch with its own requirements", depends_on=after)
        return FixStep(f.id, "requirements", [f.id], f.title, specs, requirements=specs, subject=" ".join(changes),
                       depends_on=after)
    if f.category == "nvidia_wheel_mismatch":  # a library loaded from outside the wheels: not pip's to change
        return FixStep(f.id, "requirements", [f.id], f.title, status="cannot_plan",
                       why="a CUDA library is loaded from outside torch's nvidia-* wheels (LD_LIBRARY_PATH, a system "
                           "CUDA): installing wheels cannot change what the loader finds first; drop it from the "
                           "loader path")
    if "deepspeed" in f.remedy.arguments and not any(p.name == "deepspeed" for p in plan.packages):
        return FixStep(f.id, "torch", [f.id], f.title, status="cannot_plan",
                       why="DeepSpeed is planned when asked for: `envdoctor fix --deepspeed --yes`")
    if "torch" in changes or "deepspeed" in changes:
        return FixStep(f.id, "torch", [f.id], f.title, status="cannot_plan",
                       why=f"the planner keeps the installed torch: {plan.reason or 'nothing in the index answers it'}")
    return None


# Extensions whose build chooses its kernels itself, not from TORCH_CUDA_ARCH_LIST: flash-attn's setup.py fixes its
# gencode list (FLASH_ATTN_CUDA_ARCHS from 2.8) and fetches the prebuilt release wheel unless FLASH_ATTENTION_FORCE_BUILD
# (https://github.com/Dao-AILab/flash-attention/blob/v2.8.3/setup.py)
OWN_ARCH_LIST = ("flash-attn",)


def _arch_rebuild(step: FixStep, machine: MachineFacts) -> FixStep:
    """ED309: rebuild the installed release from source for the machine's GPUs (TORCH_CUDA_ARCH_LIST), unsafe."""
    from envdoctor.compat import parse_cc

    try:
        ccs = sorted({g.cc for g in machine.gpus}, key=parse_cc)
    except ValueError:
        ccs = []
    installed = machine.packages.get(step.subject)
    make_rebuild(step, installed if isinstance(installed, str) else None,
                 f"no release is known to have kernels for this machine's GPUs (compute capability {', '.join(ccs)})")
    old = [c for c in ccs if parse_cc(c) < (7, 5)]
    if step.subject in OWN_ARCH_LIST:
        step.status, step.why = "cannot_plan", (f"{step.subject}'s build chooses its kernels itself, not from "
                                                "TORCH_CUDA_ARCH_LIST: install a release whose kernels cover this GPU")
    elif not ccs:
        step.status, step.why = "cannot_plan", "the GPUs' compute capabilities are unknown: which kernels to build is too"
    elif old and machine.nvcc and (major_minor(machine.nvcc) or (0, 0))[0] >= 13:
        step.status, step.why = "cannot_plan", (f"nvcc {machine.nvcc} cannot compile for compute capability "
                                                f"{', '.join(old)}: a CUDA 12.x toolkit is needed (CUDA_HOME)")
    elif step.status == "planned":
        step.env = {"TORCH_CUDA_ARCH_LIST": ";".join(ccs)}
    return step


def _spec(text: str) -> str:
    """A requirement as pip takes it on its command line, without the marker: the diagnosis found it applies here
    (torch's `sympy==1.13.1; python_version >= "3.9"` -> `sympy==1.13.1`)."""
    try:
        req = Requirement(text)
    except InvalidRequirement:
        return text.split(";", 1)[0].strip()
    extras = f"[{','.join(sorted(req.extras))}]" if req.extras else ""
    return f"{req.name}{extras}{req.specifier}"


def _companion_step(f: Finding, name: str, plan: Plan, machine: MachineFacts, index: WheelIndex, base: str,
                    torch_changes: bool) -> FixStep:
    step = FixStep(f"{f.id}:{name}", "companion", [f.id], f.title, subject=name)
    if torch_changes:
        planned = next((p for p in plan.packages if p.name == name), None)
        step.depends_on = [TORCH_STEP]
        if planned is not None:
            step.status, step.why = "covered", f"the torch step installs {planned.pin} with the new torch"
        else:
            step.status, step.why = "cannot_plan", f"the new torch's {name} is not in its plan"
        return step
    version = machine.torch_version
    rel = index.release(version) if version else None
    if rel is None:
        step.status = "cannot_plan"
        step.why = (f"torch {version} is not in the wheel index: which {name} pairs with it is unknown "
                    "(`envdoctor index update`)" if version else "torch does not import: its release is unknown")
        return step
    info = rel.companions.get(name) or {}
    variant, unknown = known_variant(machine)
    if variant is None:
        step.status, step.why = "cannot_plan", unknown
        return step
    if info.get("version"):
        ver = str(info["version"])
        pin = f"{name}=={ver}+{variant}"
    elif info.get("series"):
        ver = f"{info['series']}.*"
        pin = f"{name}=={ver}"
    else:
        step.status, step.why = "cannot_plan", f"the wheel index names no {name} release for torch {rel.version}"
        return step
    step.reason = (f"installed {name} {machine.packages.get(name, '?')} is not the build of torch {version}: "
                   f"{name} {ver} {variant} from the index torch came from")
    pkg = PlannedPackage(name, ver, variant, f"{base.rstrip('/')}/{variant}", step.reason, pin,
                         str(info.get("status", "UNVERIFIED")))
    step.installs, step.packages = [pin], [pkg]
    return step


def settle(plan: Plan) -> None:
    """The plan's packages, requirements and rebuilds from its planned steps; a step that depends on one that does
    not run does not run either; the status from what is left."""
    by_id = {s.id: s for s in plan.steps}
    changed = True
    while changed:
        changed = False
        for s in plan.steps:
            if s.status not in ("planned", "covered"):
                continue
            stopped = [d for d in s.depends_on if d in by_id and by_id[d].status not in ("planned",)]
            if stopped:
                s.status = "skipped"
                s.why = f"depends on step {stopped[0]}, which does not run ({by_id[stopped[0]].status})"
                changed = True
    running = [s for s in plan.steps if s.status == "planned"]
    plan.packages = [p for s in running for p in s.packages]
    plan.requirements = list(dict.fromkeys(r for s in running for r in s.requirements))
    plan.rebuilds = list(dict.fromkeys(r for s in running for r in s.rebuilds))
    plan.files = list(dict.fromkeys(u for s in running for u in s.files))
    for s in running:
        plan.env.update(s.env)
    if plan.status == "impossible":
        return
    plan.status = "planned" if (plan.packages or plan.requirements or plan.rebuilds or plan.files) else "nothing_to_do"


def select(plan: Plan, only: Sequence[str] = (), skip: Sequence[str] = ()) -> List[str]:
    """Narrow the plan to the steps `--only` names (a step id, or a finding id it answers) and drop those `--skip`
    names; the names that match no step (for the message)."""
    def names(s: FixStep) -> set:
        return {s.id, s.id.split(":", 1)[0], *s.findings}

    unknown = [n for n in [*only, *skip] if not any(current_id(n) in names(s) for s in plan.steps)]
    only, skip = [current_id(n) for n in only], [current_id(n) for n in skip]
    for s in plan.steps:
        if s.status != "planned":
            continue
        if only and not any(n in names(s) for n in only):
            s.status, s.why = "skipped", "not named by --only"
        elif any(n in names(s) for n in skip):
            s.status, s.why = "skipped", "named by --skip"
    settle(plan)
    return unknown


def make_rebuild(step: FixStep, installed: Optional[str], why: str) -> None:
    """No release for the torch in place: rebuild the installed version without build isolation (it compiles)."""
    step.kind = "extension"
    step.applicability = "unsafe"
    step.requirements = []
    if installed is None:
        step.status, step.why = "cannot_plan", f"{why}; the installed {step.subject} version is unknown"
        return
    pin = f"{step.subject}=={installed}"
    step.installs, step.rebuilds = [pin], [pin]
    step.reason = f"{step.reason}: {why}; rebuilt from source against the torch in place (compiles: --unsafe)"


def make_release_file(step: FixStep, release: str, url: str, torch_version: str) -> None:
    """The extension's release wheel built for the torch kept or planned, from outside the package index: installed
    by its file, without its dependencies (what the installed release needed is in place)."""
    step.installs, step.files, step.requirements = [url], [url], []
    step.reason = (f"{step.reason}: {step.subject} {release}'s release file built for torch {torch_version}, "
                   f"its CUDA and C++ ABI")


def make_release(step: FixStep, version: str) -> None:
    """The index has a release of the extension that fits the torch in place (pip's resolver, torch held)."""
    pin = f"{step.subject}=={version}"
    step.installs, step.requirements = [pin], [pin]
    step.reason = f"{step.reason}: {step.subject} {version} is the release built for the torch in place"


def unsafe_steps(plan: Plan) -> List[FixStep]:
    return [s for s in plan.steps if s.status == "planned" and s.applicability == "unsafe"]
