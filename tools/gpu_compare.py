"""Compare every GPU fact of an envdoctor snapshot with `nvidia-smi -q` and `python -m torch.utils.collect_env`.

    python3 tools/gpu_compare.py SNAPSHOT.json NVIDIA_SMI_Q.txt COLLECT_ENV.txt [-o SUMMARY.md]

Writes a markdown table: fact | snapshot | nvidia-smi | collect_env | verdict, where the verdict is `agree`,
`DIFFER`, or `one source` (only one side has the fact); a missing input is named at the top and its column is
empty. Exit 0 whatever the facts say (the table is the result), 2 when the snapshot cannot be read.
Stdlib only: it runs on the device machine with no install (tools/gpu_proof.sh).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

Tree = Dict[str, Any]


# --- nvidia-smi -q ----------------------------------------------------------------------------------------------


def parse_smi_q(text: str) -> Tree:
    """`nvidia-smi -q` as a nested dict: 'Key : value' lines are leaves, a bare line opens a section, nesting
    by indentation. GPUs are the sections named 'GPU 00000000:18:00.0'."""
    root: Tree = {}
    stack: List[Tuple[int, Tree]] = [(-1, root)]
    pair = re.compile(r"^(.+?)\s+:(?:\s*(.*))?$")  # keys are padded with spaces before the colon
    for raw in text.splitlines():
        if not raw.strip() or raw.lstrip().startswith("="):
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        line = raw.strip()
        while len(stack) > 1 and stack[-1][0] >= indent:
            stack.pop()
        node = stack[-1][1]
        m = pair.match(line)
        if m:
            node[m.group(1).strip()] = (m.group(2) or "").strip()
        else:  # a section ('PCI', 'GPU 00000000:18:00.0'): what is indented below it
            child: Tree = {}
            node[line] = child
            stack.append((indent, child))
    return root


def _get(tree: Tree, *paths: str) -> Optional[str]:
    """The first of `paths` ('Section/Key') that the tree holds as a value."""
    for path in paths:
        node: Any = tree
        for part in path.split("/"):
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, str) and node not in ("N/A", "Not Supported", "[N/A]", "Unknown Error"):
            return node
    return None


def _num(text: Optional[str]) -> Optional[float]:
    m = re.search(r"-?\d+(?:\.\d+)?", text or "")
    return float(m.group(0)) if m else None


def _bus(text: Optional[str]) -> Optional[str]:
    m = re.match(r"([0-9a-fA-F]+):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])", (text or "").strip())
    return f"{int(m.group(1), 16):04x}:{m.group(2).lower()}:{m.group(3).lower()}.{m.group(4)}" if m else None


_THROTTLE_NAMES = {  # nvidia-smi's words -> envdoctor's names (gpu_health.THROTTLE_BITS)
    "Applications Clocks Setting": "applications_clocks_setting", "SW Power Cap": "sw_power_cap",
    "HW Slowdown": "hw_slowdown", "Sync Boost": "sync_boost", "SW Thermal Slowdown": "sw_thermal_slowdown",
    "HW Thermal Slowdown": "hw_thermal_slowdown", "HW Power Brake Slowdown": "hw_power_brake_slowdown",
    "Display Clock Setting": "display_clock_setting",
}


def _active(section: Any) -> List[str]:
    out: List[str] = []
    if not isinstance(section, dict):
        return out
    for key, value in section.items():
        if isinstance(value, dict):
            out += _active(value)
        elif key in _THROTTLE_NAMES and value == "Active":
            out.append(_THROTTLE_NAMES[key])
    return out


def smi_facts(tree: Tree) -> Tuple[Dict[str, Any], List[Dict[str, Any]]]:
    """(machine facts, one dict per GPU) from a parsed `nvidia-smi -q`, named as the snapshot names them."""
    machine = {"driver.version": _get(tree, "Driver Version"), "driver.cuda_driver_version": _get(tree, "CUDA Version")}
    gpus: List[Dict[str, Any]] = []
    for key, g in tree.items():
        if not (key.startswith("GPU ") and isinstance(g, dict)):
            continue
        f: Dict[str, Any] = {
            "name": _get(g, "Product Name"),
            "uuid": _get(g, "GPU UUID"),
            "pci_bus_id": _bus(_get(g, "PCI/Bus Id") or key[4:]),
            "memory_mib": _num(_get(g, "FB Memory Usage/Total")),
            "pcie.gen": _num(_get(g, "PCI/GPU Link Info/PCIe Generation/Current")),
            "pcie.max_gen": _num(_get(g, "PCI/GPU Link Info/PCIe Generation/Device Max",
                                      "PCI/GPU Link Info/PCIe Generation/Max")),
            "pcie.width": _num(_get(g, "PCI/GPU Link Info/Link Width/Current")),
            "pcie.max_width": _num(_get(g, "PCI/GPU Link Info/Link Width/Max")),
            "persistence_mode": _flag(_get(g, "Persistence Mode")),
            "mig_enabled": _flag(_get(g, "MIG Mode/Current")),
            "ecc_uncorrected": _ecc_uncorrected(g),
            "health.compute_mode": (_get(g, "Compute Mode") or "").lower().replace(" ", "_") or None,
            "health.throttle_reasons": sorted(_active(g.get("Clocks Event Reasons") or g.get("Clocks Throttle Reasons")))
            if isinstance(g.get("Clocks Event Reasons") or g.get("Clocks Throttle Reasons"), dict) else None,
            "health.temperature_c": _num(_get(g, "Temperature/GPU Current Temp")),
            "health.slowdown_temperature_c": _num(_get(g, "Temperature/GPU Slowdown Temp")),
            "health.power_limit_w": _num(_get(g, "GPU Power Readings/Current Power Limit", "Power Readings/Power Limit",
                                              "GPU Power Readings/Power Limit")),
            "health.power_default_w": _num(_get(g, "GPU Power Readings/Default Power Limit",
                                                "Power Readings/Default Power Limit")),
            "health.app_clock_mhz": _num(_get(g, "Applications Clocks/Graphics")),
            "health.default_app_clock_mhz": _num(_get(g, "Default Applications Clocks/Graphics")),
            "health.max_clock_mhz": _num(_get(g, "Max Clocks/Graphics")),
            "health.row_remap.correctable": _num(_get(g, "Remapped Rows/Correctable Error")),
            "health.row_remap.uncorrectable": _num(_get(g, "Remapped Rows/Uncorrectable Error")),
            "health.row_remap.pending": _flag(_get(g, "Remapped Rows/Pending")),
            "health.row_remap.failed": _flag(_get(g, "Remapped Rows/Remapping Failure Occurred")),
        }
        hist = (g.get("Remapped Rows") or {}).get("Bank Remap Availability Histogram") if isinstance(
            g.get("Remapped Rows"), dict) else None
        if isinstance(hist, dict):
            for k in ("Max", "High", "Partial", "Low", "None"):
                f[f"health.row_remap.histogram.{k.lower()}"] = _num(hist.get(k))
        gpus.append(f)
    return machine, gpus


def _flag(text: Optional[str]) -> Optional[bool]:
    if text is None:
        return None
    return {"enabled": True, "yes": True, "disabled": False, "no": False}.get(text.strip().lower())


def _ecc_uncorrected(g: Tree) -> Optional[float]:
    """Volatile uncorrected ECC errors: the SRAM + DRAM split of newer drivers, or the 'Double Bit/Total' of older."""
    vol = (g.get("ECC Errors") or {}).get("Volatile") if isinstance(g.get("ECC Errors"), dict) else None
    if not isinstance(vol, dict):
        return None
    if "Double Bit" in vol:
        return _num(_get(vol, "Double Bit/Total"))
    parts = [_num(v) for k, v in vol.items() if isinstance(v, str) and "Uncorrectable" in k]
    parts = [p for p in parts if p is not None]
    return sum(parts) if parts else None


# --- collect_env ------------------------------------------------------------------------------------------------


def collect_env_facts(text: str) -> Dict[str, Any]:
    """The facts of `python -m torch.utils.collect_env` that the snapshot also holds."""
    def line(label: str) -> Optional[str]:
        m = re.search(rf"^{re.escape(label)}:[ \t]*(.*)$", text, re.M)
        value = m.group(1).strip() if m else None
        return None if value in (None, "", "N/A", "None", "Could not collect") else value

    out: Dict[str, Any] = {
        "torch.version": line("PyTorch version"),
        "torch.cuda": line("CUDA used to build PyTorch"),
        "torch.cuda_available": {"True": True, "False": False}.get(line("Is CUDA available") or ""),
        "driver.version": line("Nvidia driver version"),
        "python.version": (re.match(r"\d+\.\d+\.\d+", line("Python version") or "") or [None])[0],
        "cuda_toolkit.nvcc_version": (re.match(r"\d+\.\d+", line("CUDA runtime version") or "") or [None])[0],
    }
    models = re.search(r"^GPU models and configuration:[ \t]*(.*?)(?=^\S[^:\n]*:|\Z)", text, re.M | re.S)
    names: List[str] = []
    if models:
        names = [m.group(1).strip() for m in re.finditer(r"GPU \d+: ([^\n(]+)", models.group(1))]
    out["gpu_names"] = names or None
    nccl = re.search(r"nvidia-nccl-cu\d+[=\s]+(\d+\.\d+\.\d+)", text)
    out["nccl_wheel"] = nccl.group(1) if nccl else None
    return out


# --- the comparison ---------------------------------------------------------------------------------------------


def _snap_value(doc: Dict[str, Any], path: str) -> Any:
    node: Any = doc
    for part in path.split("."):
        if isinstance(node, list):
            node = node[int(part)] if part.isdigit() and int(part) < len(node) else None
        elif isinstance(node, dict):
            node = node.get(part)
        else:
            return None
    return node


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return abs(float(a) - float(b)) <= max(0.5, 0.01 * max(abs(float(a)), abs(float(b))))
    if isinstance(a, list) and isinstance(b, list):
        return sorted(map(str, a)) == sorted(map(str, b))
    return str(a).strip().lower() == str(b).strip().lower()


def _verdict(values: List[Any]) -> str:
    known = [v for v in values if v is not None]
    if len(known) < 2:
        return "one source" if known else "none"
    return "agree" if all(_same(known[0], v) for v in known[1:]) else "DIFFER"


def compare(snapshot: Dict[str, Any], smi_text: Optional[str], env_text: Optional[str]) -> List[Tuple[str, Any, Any, Any, str]]:
    """Rows (fact, snapshot, nvidia-smi, collect_env, verdict) for every GPU fact any source holds."""
    smi_machine, smi_gpus = smi_facts(parse_smi_q(smi_text)) if smi_text else ({}, [])
    env = collect_env_facts(env_text) if env_text else {}
    rows: List[Tuple[str, Any, Any, Any, str]] = []

    def add(fact: str, snap: Any, smi: Any, ce: Any) -> None:
        rows.append((fact, snap, smi, ce, _verdict([snap, smi, ce])))

    add("driver.version", _snap_value(snapshot, "driver.version"), smi_machine.get("driver.version"), env.get("driver.version"))
    add("driver.cuda_driver_version", _snap_value(snapshot, "driver.cuda_driver_version"),
        smi_machine.get("driver.cuda_driver_version"), None)
    for path in ("torch.version", "torch.cuda", "torch.cuda_available", "python.version", "cuda_toolkit.nvcc_version"):
        add(path, _snap_value(snapshot, path), None, env.get(path))
    nccl = _snap_value(snapshot, "torch.nccl")
    add("torch.nccl", nccl, None, env.get("nccl_wheel"))
    snap_gpus = snapshot.get("gpus") if isinstance(snapshot.get("gpus"), list) else []
    add("gpu count", len(snap_gpus) if snapshot.get("gpus") is not None else None, len(smi_gpus) if smi_text else None,
        len(env["gpu_names"]) if env.get("gpu_names") else None)
    by_bus = {f.get("pci_bus_id"): f for f in smi_gpus}
    names = env.get("gpu_names") or []
    for i, g in enumerate(snap_gpus):
        smi = by_bus.get(g.get("pci_bus_id")) or (smi_gpus[i] if i < len(smi_gpus) else {})
        p = f"gpus.{i}."
        add(p + "name", g.get("name"), smi.get("name"), names[i] if i < len(names) else None)
        for key in ("uuid", "pci_bus_id", "persistence_mode", "mig_enabled", "ecc_uncorrected"):
            add(p + key, g.get(key), smi.get(key), None)
        mem = g.get("memory_bytes")
        add(p + "memory_mib", mem / 2 ** 20 if isinstance(mem, (int, float)) else None, smi.get("memory_mib"), None)
        for key in ("gen", "max_gen", "width", "max_width"):
            add(p + "pcie." + key, _snap_value(g, "pcie." + key), smi.get("pcie." + key), None)
        add(p + "retired_pages_pending", g.get("retired_pages_pending"), smi.get("health.row_remap.pending"), None)
        for key in sorted(k for k in smi if k.startswith("health.")):
            add(p + key, _snap_value(g, key), smi.get(key), None)
        for key in ("health.xids", "health.nvlink_errors"):
            value = _snap_value(g, key)
            add(p + key, len(value) if isinstance(value, list) else value, None, None)
    for j, smi in enumerate(smi_gpus[len(snap_gpus):], start=len(snap_gpus)):
        add(f"gpus.{j}.name (not in the snapshot)", None, smi.get("name"), None)
    return rows


def render(rows: List[Tuple[str, Any, Any, Any, str]], missing: List[str]) -> str:
    def cell(v: Any) -> str:
        return "" if v is None else json.dumps(v) if not isinstance(v, str) else v

    out = ["# GPU facts: envdoctor snapshot vs nvidia-smi -q vs torch collect_env", ""]
    out += [f"- input missing: {m}" for m in missing]
    counts = {v: sum(1 for r in rows if r[4] == v) for v in ("agree", "DIFFER", "one source", "none")}
    out += [f"- {counts['agree']} agree, {counts['DIFFER']} differ, {counts['one source']} from one source only", "",
            "| fact | snapshot | nvidia-smi | collect_env | verdict |", "|---|---|---|---|---|"]
    out += [f"| {f} | {cell(a)} | {cell(b)} | {cell(c)} | {v} |" for f, a, b, c, v in rows if v != "none"]
    return "\n".join(out) + "\n"


def _read(path: Optional[str], missing: List[str]) -> Optional[str]:
    if not path:
        return None
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        missing.append(f"{path}: {exc.strerror or exc}")
        return None
    if not text.strip() or text.startswith("SKIPPED"):
        missing.append(f"{path}: {text.strip()[:200] or 'empty'}")
        return None
    return text


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("snapshot")
    ap.add_argument("nvidia_smi", nargs="?")
    ap.add_argument("collect_env", nargs="?")
    ap.add_argument("-o", "--output")
    args = ap.parse_args(argv)
    missing: List[str] = []
    try:
        snapshot = json.loads(Path(args.snapshot).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(f"gpu_compare: cannot read the snapshot {args.snapshot}: {exc}", file=sys.stderr)
        return 2
    text = render(compare(snapshot, _read(args.nvidia_smi, missing), _read(args.collect_env, missing)), missing)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
