"""The machine `fix --target SNAPSHOT` / `fix --gpu CC --driver VERSION` plans for: another machine's GPUs and
driver (a Docker build has neither) with this environment's Python, platform and packages, as a Snapshot the
planner reads like any other. Pure: no probe, no process."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from envdoctor import compat
from envdoctor.errors import InputError
from envdoctor.snapshot import Driver, Gpu, Snapshot, Unknown, is_unknown, known_list, present

_DRIVER = re.compile(r"\d{2,4}\.\d{1,3}(\.\d{1,3})?")
ON_TARGET = Unknown("planned for another machine: known there, at its first `envdoctor check`")


@dataclass
class Target:
    """Another machine's GPUs and driver. `source`: the snapshot file, or 'command line'."""

    source: str
    driver: Optional[str]
    gpus: List[Gpu] = field(default_factory=list)

    def to_json(self) -> Dict[str, Any]:
        return {"source": self.source, "driver": self.driver,
                "gpus": [{"index": g.index, "name": g.name if present(g.name) else None,
                          "compute_capability": str(g.compute_capability)} for g in self.gpus],
                "verify": "at the first `envdoctor check` on the target"}


def parse_driver(text: str) -> str:
    """'570.133.07' as an NVIDIA driver version; anything else is bad input."""
    text = text.strip()
    if not _DRIVER.fullmatch(text):
        raise InputError(f"--driver {text!r}: not an NVIDIA driver version (e.g. 570.133.07)")
    return text


def parse_gpus(spec: str, count: Optional[int] = None, name: Optional[str] = None) -> List[Gpu]:
    """'12.0' or '9.0,9.0,8.0' as GPUs; `count` repeats a single compute capability (8 x H100)."""
    ccs = [c.strip() for c in spec.split(",")]
    for cc in ccs:
        try:
            major, _minor = compat.parse_cc(cc)
        except ValueError:
            major = 0
        if not 1 <= major <= 99:
            raise InputError(f"--gpu {cc!r}: not a compute capability (e.g. 9.0 for an H100, 12.0 for an RTX 5090)")
    if count is not None:
        if count < 1:
            raise InputError(f"--gpu-count {count}: must be 1 or more")
        if len(ccs) != 1 and count != len(ccs):
            raise InputError(f"--gpu-count {count} with {len(ccs)} compute capabilities: give one, or one per GPU")
        ccs = ccs * count if len(ccs) == 1 else ccs
    label = name.strip() if name and name.strip() else None
    return [Gpu(index=i, name=label or Unknown("not given"), compute_capability=cc) for i, cc in enumerate(ccs)]


def from_options(gpu: str, driver: Optional[str], count: Optional[int] = None, name: Optional[str] = None) -> Target:
    if driver is None:
        raise InputError("--gpu needs --driver VERSION: the driver decides which CUDA builds run")
    return Target("command line", parse_driver(driver), parse_gpus(gpu, count, name))


def from_snapshot(snap: Snapshot, source: str) -> Target:
    """The GPUs and driver of a snapshot taken on the target; what it does not know stays unknown. A GPU list
    that is unknown there cannot be planned for (it is not 'no GPU')."""
    if not isinstance(snap.gpus, list) or (not snap.gpus and is_unknown(snap.driver)):
        what = snap.gpus if not isinstance(snap.gpus, list) else f"empty and its driver {snap.driver}"
        raise InputError(f"{source}: its GPU list is {what}; take the snapshot where the NVIDIA driver runs, "
                         "or name the GPUs with --gpu CC --driver VERSION")
    driver = str(snap.driver.version) if present(snap.driver) and snap.driver.version else None
    return Target(source, driver, [g for g in known_list(snap.gpus) if present(g.compute_capability)])


def retarget(here: Snapshot, target: Target) -> Snapshot:
    """This environment's snapshot with the target's GPUs and driver. Whether CUDA starts is the target's
    fact, unknown here, and so is a GPU's health; the torch build (its CUDA version, arch list) stays."""
    snap = copy.deepcopy(here)
    snap.gpus = [copy.deepcopy(g) for g in target.gpus]
    snap.driver = Driver(version=target.driver) if target.driver else ON_TARGET
    if present(snap.torch):
        snap.torch.cuda_available = ON_TARGET
        snap.torch.device_count = ON_TARGET
        snap.torch.cuda_init_error = None
    return snap
