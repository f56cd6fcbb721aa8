"""Refresh the wheel index: the bundled one plus what the live package indexes list now (`envdoctor index
update`), validated before anyone writes it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional

from envdoctor.wheels.remote import DEFAULT_DEADLINE

if TYPE_CHECKING:
    from envdoctor.wheels.index import WheelIndex

__all__ = ["DEFAULT_DEADLINE", "IndexRefresh", "IndexSources", "index_sources", "refresh_wheel_index"]


@dataclass(frozen=True)
class IndexSources:
    """Where a refresh reads: the bundled index it starts from, the PyTorch wheel index, pip's index (DeepSpeed)."""

    bundled: WheelIndex
    base: str
    pip_url: Optional[str]


def index_sources(index_base: Optional[str], torch_index: Optional[str], pip_index: Optional[str]) -> IndexSources:
    """The sources, each URL checked (InputError naming where it came from): `index_base` (--index-base), else
    `torch_index` (ENVDOCTOR_TORCH_INDEX), else the bundled index's default; pip's index as configured or pip's."""
    from envdoctor.install.resolve import check_index_url
    from envdoctor.probes.pip_config import pip_index_url
    from envdoctor.wheels.index import bundled_path, read_index

    bundled = read_index(bundled_path())
    base = check_index_url(index_base or torch_index or bundled.default_index_base, "--index-base")
    pip_url = pip_index_url(pip_index)
    if pip_url:
        check_index_url(pip_url, "pip's index-url")
    return IndexSources(bundled, base, pip_url)


@dataclass(frozen=True)
class IndexRefresh:
    """The refreshed index document, what could not be read, how many torch index pages were, and what was
    learned beyond patches (a new release, a new variant: their arch lists assumed, `envdoctor.wheels.learn`)."""

    document: Dict[str, Any]
    failures: List[str]
    pages: int
    learned: List[str] = field(default_factory=list)

    def to_json(self) -> Dict[str, Any]:
        return self.document

    def check(self) -> None:
        """InputError listing every problem of the refreshed document."""
        from envdoctor.wheels.index import parse_index

        parse_index(self.document, "<refreshed index>")

    def text(self) -> str:
        """The document as the user copy is written."""
        return json.dumps(self.document, indent=1) + "\n"


def refresh_wheel_index(sources: IndexSources, timeout: float, deadline: float,
                        say: Callable[[str], None]) -> IndexRefresh:
    """Read the live indexes (each read within `timeout`, all within `deadline`) into a new document, not yet
    checked: `IndexRefresh.check()` validates it before anyone writes it (InputError listing every problem). No
    page read: `pages` is 0, nothing to write."""
    from envdoctor.wheels.remote import BoundedFetch, refresh

    learned: List[str] = []
    new, failures, pages = refresh(sources.bundled.raw, sources.base, sources.pip_url, BoundedFetch(timeout, deadline),
                                   say, learned)
    return IndexRefresh(new, failures, pages, learned)


@dataclass(frozen=True)
class MachineVariantProperties:
    """This machine's wheel-variant properties (PEP 817) as an NVIDIA variant provider reports them, and why
    some could not be given (no driver, no GPU)."""

    properties: Dict[str, Dict[str, List[str]]]
    driver: Optional[str]
    driver_cuda: Optional[str]
    compute_capabilities: List[str]
    notes: List[str]

    def lines(self) -> List[str]:
        """`namespace :: feature :: value`, most preferred first, then the notes as comments."""
        from envdoctor.wheels.variants import property_lines

        return property_lines(self.properties) + [f"# {n}" for n in self.notes]


def machine_variant_properties(driver: Optional[str], ccs: List[str], os_name: str,
                               index: WheelIndex) -> MachineVariantProperties:
    """The variant properties of a machine with this NVIDIA driver and GPUs of these compute capabilities,
    from the index's driver table (the CUDA lower bound) and its nvcc targets (the sm_arch values)."""
    from envdoctor.wheels.variants import driver_cuda, machine_properties

    codes = {int(a[3:]) for targets in index.nvcc_sass.values() for a in targets if a[3:].isdigit()}
    cuda = driver_cuda(driver, os_name, index.drivers) if driver else None
    notes = []
    if not driver:
        notes.append("the NVIDIA driver version is unknown: no nvidia properties (a provider reports none either)")
    elif cuda is None:
        notes.append(f"driver {driver} predates every CUDA toolkit the index knows: no cuda_version_lower_bound")
    if not ccs:
        notes.append("no NVIDIA GPU: no sm_arch values")
    if len(set(ccs)) > 1:
        notes.append(f"sm_arch values are those every GPU runs (compute capabilities {', '.join(sorted(set(ccs)))})")
    props = machine_properties(driver, ccs, os_name, index.drivers, codes)
    return MachineVariantProperties(props, driver, cuda, list(ccs), notes)


def snapshot_variant_properties(snap: Any, index: WheelIndex) -> MachineVariantProperties:
    """The variant properties of the machine a snapshot (or a `fix --gpu/--target` retargeted one) describes."""
    from envdoctor.snapshot import known_list, present

    driver = str(snap.driver.version) if present(snap.driver) and snap.driver.version else None
    ccs = [str(g.compute_capability) for g in known_list(snap.gpus) if present(g.compute_capability)] \
        if isinstance(snap.gpus, list) else []
    os_name = str(snap.host.os) if present(snap.host) else "linux"
    return machine_variant_properties(driver, ccs, os_name, index)
