"""Wheel variants (PEP 817 / PEP 825): the properties a variant wheel declares, and this machine's in the form a
variant provider reports them.

A variant wheel's file name ends in a variant label (`torch-2.8.0-cp313-cp313-manylinux_2_28_x86_64-cu129.whl`);
its `*.dist-info/variant.json` (and the index's `{name}-{version}-variants.json`) maps the label to properties,
`namespace :: feature :: value`. PyTorch's builds use the `nvidia` namespace: `cuda_version_lower_bound` (the
CUDA the build needs at least, `12.9`), `cuda_version_upper_bound` (below which major, `13`) and `sm_arch`
(`90_real`: SASS for sm_90; `120_virtual`: PTX compute_120). A wheel is compatible when every feature it declares
has at least one value the machine supports (PEP 825); a label with no properties (`null`) always is.

`nvidia_build` turns declared properties into the facts envdoctor plans with (CUDA X.Y, SASS and PTX targets);
`machine_properties` turns a driver and GPUs into the values an NVIDIA provider would report as supported, so that
a variant-aware installer and envdoctor can be compared on the same terms (docs/variants.md). Pure: no probe.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

from envdoctor import compat
from envdoctor.errors import InputError
from envdoctor.versions import major_minor
from envdoctor.versions import parse as parse_version

Properties = Dict[str, Dict[str, List[str]]]  # namespace -> feature -> values
_NAME = re.compile(r"^[a-z0-9_]+$")
_VALUE = re.compile(r"^[a-z0-9_.]+$")
_LABEL = re.compile(r"^[0-9a-z_.]{1,16}$")
_SCHEMA_VERSION = re.compile(r"/v?(\d+\.\d+\.\d+)\.json$")
KNOWN_FORMATS = ("0.0.1", "0.0.2", "0.0.3", "1.0.0")  # PEP 825 drafts (0.0.x) and the final format
_SM = re.compile(r"^(\d{2,3})_(real|virtual)$")


@dataclass(frozen=True)
class VariantMetadata:
    """A variant.json (or index-level variants.json) document, checked."""

    format_version: str
    namespaces: List[str]  # default-priorities.namespace, most important first
    variants: Dict[str, Properties]  # label -> properties


@dataclass(frozen=True)
class NvidiaBuild:
    """What an `nvidia` variant declares, as envdoctor's facts: CUDA bounds and the arch list."""

    cuda_lower: Optional[str]
    cuda_upper: Optional[str]
    sm: List[str] = field(default_factory=list)
    ptx: List[str] = field(default_factory=list)

    @property
    def variant(self) -> Optional[str]:
        """The download.pytorch.org variant name of the CUDA lower bound ('12.9' -> 'cu129')."""
        mm = major_minor(self.cuda_lower or "")
        return f"cu{mm[0]}{mm[1]}" if mm else None


def split_label(filename: str) -> Tuple[str, Optional[str]]:
    """(the wheel file name without its variant label, the label or None): PEP 825 adds `-{label}` after the
    platform tag, so a variant wheel's name has one dash-separated part more than PEP 427's (six, or seven with
    a build tag)."""
    if not filename.endswith(".whl"):
        return filename, None
    parts = filename[:-4].split("-")
    if len(parts) == 7 or (len(parts) == 6 and not parts[2][:1].isdigit()):  # a build tag starts with a digit
        label = parts[-1]
        if _LABEL.match(label):
            return "-".join(parts[:-1]) + ".whl", label
    return filename, None


def parse_variant_json(doc: Any, where: str) -> VariantMetadata:
    """A decoded variant.json, checked against PEP 825's structure (InputError naming `where` and what)."""
    def bad(what: str) -> InputError:
        return InputError(f"{where}: not PEP 825 variant metadata: {what}")

    if not isinstance(doc, dict):
        raise bad("expected a JSON object")
    m = _SCHEMA_VERSION.search(str(doc.get("$schema", "")))
    if not m:
        raise bad(f"$schema {doc.get('$schema')!r} names no format version")
    if m.group(1) not in KNOWN_FORMATS:
        raise bad(f"format version {m.group(1)} is unknown (known: {', '.join(KNOWN_FORMATS)}); such wheels are "
                  "unsupported (PEP 825)")
    prio = doc.get("default-priorities")
    if not isinstance(prio, dict) or not isinstance(prio.get("namespace"), list):
        raise bad("default-priorities.namespace must list the namespaces")
    variants = doc.get("variants")
    if not isinstance(variants, dict) or not variants:
        raise bad("variants must map a label to its properties")
    out: Dict[str, Properties] = {}
    for label, props in variants.items():
        if not isinstance(label, str) or not _LABEL.match(label):
            raise bad(f"variant label {label!r} is not 1-16 of 0-9 a-z _ .")
        if not isinstance(props, dict):
            raise bad(f"variants.{label} must map namespaces to features")
        out[label] = {}
        for ns, feats in props.items():
            if not _NAME.match(str(ns)) or not isinstance(feats, dict):
                raise bad(f"variants.{label}: namespace {ns!r} is not [a-z0-9_]+ with features")
            if ns not in prio["namespace"]:
                raise bad(f"variants.{label}: namespace {ns!r} is missing from default-priorities.namespace")
            out[label][ns] = {}
            for feat, values in feats.items():
                if not _NAME.match(str(feat)) or not isinstance(values, list) or not values or \
                        not all(isinstance(v, str) and _VALUE.match(v) for v in values):
                    raise bad(f"variants.{label}.{ns}.{feat}: values must be a non-empty list of [a-z0-9_.]+")
                out[label][ns][feat] = list(values)
    if "null" in out and out["null"]:
        raise bad("the label 'null' is reserved for the variant with no properties")
    return VariantMetadata(m.group(1), [str(n) for n in prio["namespace"]], out)


def read_variant_json(text: str, where: str) -> VariantMetadata:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{where}: invalid JSON at line {exc.lineno}: {exc.msg}") from None
    return parse_variant_json(doc, where)


def nvidia_build(props: Properties) -> Optional[NvidiaBuild]:
    """The `nvidia` properties as CUDA bounds and SASS/PTX targets; None when the variant declares none."""
    nv = props.get("nvidia")
    if not nv:
        return None
    sm, ptx = [], []
    for value in nv.get("sm_arch", []):
        m = _SM.match(value)
        if m:
            (sm if m.group(2) == "real" else ptx).append(f"{'sm' if m.group(2) == 'real' else 'compute'}_{m.group(1)}")
    lower = max(nv.get("cuda_version_lower_bound", []), key=_ver, default=None)
    upper = min(nv.get("cuda_version_upper_bound", []), key=_ver, default=None)
    return NvidiaBuild(lower, upper, sorted(set(sm), key=_arch_key), sorted(set(ptx), key=_arch_key))


def _ver(text: str) -> Tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", text)) or (0,)


def _arch_key(text: str) -> int:
    return int(text.split("_", 1)[1])


def driver_cuda(driver: str, os_name: str, drivers: Mapping[str, Any]) -> Optional[str]:
    """The newest CUDA X.Y whose toolkit GA driver (Table 3) this driver is: what a provider reports as the
    driver's CUDA version (its user-mode driver). None when the driver cannot be read or predates them all."""
    have = parse_version(driver)
    if have is None:
        return None
    osn = "windows" if os_name.lower().startswith("win") else "linux"
    best = None
    for cuda, row in (drivers.get("toolkits") or {}).items():
        ga = parse_version(((row or {}).get("toolkit_ga") or {}).get(osn) or "")
        if ga is not None and ga <= have and (best is None or _ver(cuda) > _ver(best)):
            best = cuda
    return best


def machine_properties(driver: Optional[str], ccs: Iterable[str], os_name: str, drivers: Mapping[str, Any],
                       arch_codes: Iterable[int]) -> Properties:
    """The `nvidia` values this machine supports, most preferred first, as a provider reports them:
    cuda_version_lower_bound: the driver's CUDA version and every older known one; sm_arch: `XY_real` for the SASS
    every GPU runs (same major, minor not newer) and `XY_virtual` for the PTX every GPU can JIT (not newer than the
    GPU). `arch_codes`: the known targets (90, 100, 120). No driver or no GPU: no nvidia properties."""
    ccs = list(ccs)
    cuda = driver_cuda(driver, os_name, drivers) if driver else None
    if cuda is None or not ccs:
        return {}
    known = sorted({c for c in (drivers.get("toolkits") or {}) if _ver(c) <= _ver(cuda)}, key=_ver, reverse=True)
    codes = sorted(set(arch_codes), reverse=True)
    real: Optional[set] = None
    virtual: Optional[set] = None
    for cc in ccs:
        major, minor = compat.parse_cc(cc)
        r = {c for c in codes if c // 10 == major and c % 10 <= minor}
        v = {c for c in codes if c <= major * 10 + minor}
        real = r if real is None else real & r
        virtual = v if virtual is None else virtual & v
    sm = [f"{c}_real" for c in sorted(real or (), reverse=True)] + \
        [f"{c}_virtual" for c in sorted(virtual or (), reverse=True)]
    return {"nvidia": {"cuda_version_lower_bound": known, "sm_arch": sm}}


def compatible(declared: Properties, supported: Properties) -> Tuple[bool, str]:
    """PEP 825's rule: every declared feature has at least one value the machine supports. A CUDA lower bound
    is supported when it is not newer than the driver's CUDA, an upper bound when the driver's CUDA is below it."""
    for ns, feats in declared.items():
        for feat, values in feats.items():
            have = (supported.get(ns) or {}).get(feat)
            if feat == "cuda_version_upper_bound" and ns == "nvidia":
                top = (supported.get("nvidia") or {}).get("cuda_version_lower_bound") or []
                if top and any(_ver(top[0]) < _ver(v) for v in values):
                    continue
                return False, f"{ns} :: {feat}: the driver's CUDA {top[0] if top else 'unknown'} is not below {values}"
            if have is None:
                return False, f"{ns} :: {feat}: not reported for this machine (no provider for it here)"
            if feat == "cuda_version_lower_bound" and ns == "nvidia":
                if have and any(_ver(v) <= _ver(have[0]) for v in values):
                    continue
                return False, f"{ns} :: {feat} :: {', '.join(values)}: the driver supports CUDA {have[0] if have else '?'}"
            if not set(values) & set(have):
                return False, f"{ns} :: {feat}: none of {', '.join(values)} is supported here"
    return True, "every declared property is supported here"


def property_lines(props: Properties) -> List[str]:
    """`namespace :: feature :: value`, one per value, in the given order."""
    return [f"{ns} :: {feat} :: {v}" for ns, feats in props.items() for feat, values in feats.items() for v in values]
