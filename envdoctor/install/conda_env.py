"""A conda environment whose torch is conda's own `pytorch` package (a `conda-meta/pytorch-*.json` record).

pip installing torch over it leaves two owners of one module: conda still lists its pytorch (and reinstalls
or "repairs" it on the next `conda install`), and its CUDA libraries stay next to pip's. So `fix` does not
install there: it plans the switch to a pip-only torch (remove conda's packages, then install) or staying
with conda, and says why."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional

from envdoctor.bounded_read import read_text
from envdoctor.wheels.planner import Plan

# conda's packages that hold torch or pin its build; removed together for a pip-only torch.
TORCH_PACKAGES = ("pytorch", "pytorch-cuda", "pytorch-mutex", "pytorch-cpu", "pytorch-gpu", "libtorch",
                  "torchvision", "torchaudio", "torchtriton")


@dataclass
class CondaTorch:
    prefix: str
    version: Optional[str]  # None: the record could not be read
    build: Optional[str]
    channel: Optional[str]
    packages: List[str]  # the conda packages of TORCH_PACKAGES installed there

    def describe(self) -> str:
        what = f"conda's pytorch {self.version or '(version unreadable)'}"
        extra = ", ".join(x for x in (self.build, self.channel and f"channel {self.channel}") if x)
        return what + (f" ({extra})" if extra else "")


def _name_of(record: Path) -> str:
    """`pytorch-cuda-12.1-ha16c6d3_5.json` -> `pytorch-cuda` (a conda-meta file is name-version-build)."""
    return record.stem.rsplit("-", 2)[0]


def conda_torch(prefix: str) -> Optional[CondaTorch]:
    """conda's pytorch in this environment, or None when conda does not manage a torch here (no conda-meta,
    or no pytorch record in it)."""
    meta = Path(prefix) / "conda-meta"
    if not meta.is_dir():
        return None
    try:
        records = sorted(meta.glob("*.json"))
    except OSError:
        return None
    names = {_name_of(r): r for r in records}
    record = names.get("pytorch")
    if record is None:
        return None
    version = build = channel = None
    try:
        doc = json.loads(read_text(record, cap=64 * 1024 * 1024))
        if isinstance(doc, dict):
            version, build = doc.get("version"), doc.get("build")
            channel = doc.get("channel")
            channel = str(channel).rstrip("/").rsplit("/", 2)[-2] if channel and "/" in str(channel) else channel
    except (OSError, ValueError):
        pass
    return CondaTorch(prefix, str(version) if version else None, str(build) if build else None,
                      str(channel) if channel else None, [n for n in TORCH_PACKAGES if n in names])


def overlaps(found: CondaTorch, plan: Plan) -> List[str]:
    """The planned packages conda owns here (torch is conda's `pytorch`)."""
    owned = {"torch" if n == "pytorch" else n for n in found.packages}
    return [p.name for p in plan.packages if p.name in owned]


def switch_command(found: CondaTorch) -> List[str]:
    """The first step of the pip-only switch: conda forgets its torch packages, without touching their
    dependencies; the plan's pip commands follow."""
    return ["conda", "remove", "--prefix", found.prefix, "--force", "--yes", *found.packages]


def why(found: CondaTorch, plan: Plan) -> str:
    torch = plan.torch
    stay = (f"; or stay with conda: `conda install --prefix {found.prefix} -c conda-forge pytorch={torch.version.split('+')[0]}`"
            " (conda-forge's build, which envdoctor does not check against these GPUs)") if torch else ""
    return (f"{found.prefix} is a conda environment with {found.describe()}: pip would install a second torch over it "
            "that conda does not know about (conda keeps its record and its CUDA libraries and may put its own back); "
            f"switch to a pip-only torch: `conda remove --prefix {found.prefix} --force --yes {' '.join(found.packages)}`, "
            f"then `envdoctor fix --yes`{stay}")
