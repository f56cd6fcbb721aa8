"""The facts of a snapshot as grouped, readable text lines (shared by `check`, `report` and the TUI)."""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

from envdoctor.byte_sizes import format_bytes
from envdoctor.redact import env_value
from envdoctor.snapshot import Gpu, Snapshot, Unknown, is_absent, known_list, present
from envdoctor.versions import cudnn_human

# A section whose probe is still running (the TUI shows the snapshot as the probes finish).
PROBING = Unknown("probing…")


def op_report(ops: Dict[str, Any]) -> str:
    """DeepSpeed's ops as `ds_report` lists them: each op's install state and whether it can be built here."""
    def state(op: Any) -> str:
        op = op if isinstance(op, dict) else {}
        built = {True: "installed", False: "JIT-built on first use", None: "install state unknown"}[op.get("installed")]
        return f"{built}, {'compatible' if op.get('compatible') else 'NOT compatible here'}"
    return "; ".join(f"{name}: {state(op)}" for name, op in sorted(ops.items()))


def show(value: Any, unit: str = "") -> str:
    """A field as a person reads it: the value, 'not available (why)', 'probe failed (error)' or 'probing…'."""
    if value == PROBING:
        return PROBING.reason
    if is_absent(value):
        return str(value)
    if value is None:
        return "unknown"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return f"{value}{unit}"


def gib(value: Any) -> str:
    if not present(value):
        return show(value)
    return format_bytes(float(value), smallest="MiB", digits={"GiB": 1, "MiB": 0})


def sm(gpu: Gpu) -> str:
    cc = gpu.compute_capability
    return f"sm_{cc.replace('.', '')}" if present(cc) else f"compute capability {show(cc)}"


def fact_groups(snap: Snapshot) -> List[Tuple[str, List[Tuple[str, str]]]]:
    """[(group title, [(label, value)])] in a fixed order."""
    h = snap.host
    machine = [
        ("host", show(h.hostname)),
        ("os", f"{h.os} {h.arch}" + (f", {h.distro}" if present(h.distro) else "")),
        ("kernel", show(h.kernel)),
        ("glibc", show(h.glibc)),
        ("container", show(h.container) + (f", GPU devices passed: {show(h.container_gpu_access)}"
                                           if present(h.container) and h.container != "none" else "")),
        ("WSL", show(h.wsl)),
        ("CPU", _cpu(snap)),
        ("memory", gib(h.memory_bytes)),
        ("/dev/shm", gib(h.shm_bytes)),
        ("NUMA nodes", ", ".join(f"{n.id}: cpus {show(n.cpus)}" for n in h.numa_nodes) if present(h.numa_nodes)
         else show(h.numa_nodes)),
        ("IOMMU", show(h.iommu)),
        ("ACS-enabled bridges", show(h.acs_enabled_bridges)),
    ]
    d = snap.driver
    driver = [("driver", f"{d.version} (supports CUDA {show(d.cuda_driver_version)}; read by {show(d.source)})")
              if present(d) else ("driver", show(d))]
    if isinstance(snap.gpus, list):
        gpus = [(f"GPU {g.index}", _gpu(g)) for g in known_list(snap.gpus)] or [("GPUs", "none found")]
    else:
        gpus = [("GPUs", show(snap.gpus))]
    t = snap.torch
    if present(t) and t.importable:
        torch = [
            ("torch", f"{show(t.version)} at {show(t.path)}"),
            ("built for", f"CUDA {show(t.cuda)}" + (f", ROCm {t.hip}" if present(t.hip) else "")),
            ("cuDNN / NCCL", f"{cudnn_human(t.cudnn) if present(t.cudnn) else show(t.cudnn)} / {show(t.nccl)}"),
            ("arch list", " ".join(t.arch_list) if present(t.arch_list) and t.arch_list else show(t.arch_list)
             if is_absent(t.arch_list) else "none (CPU build)"),
            ("CUDA available", f"{show(t.cuda_available)}, {show(t.device_count)} device(s)"
             + (f" — {t.cuda_init_error}" if present(t.cuda_init_error) else "")),
            ("distributed", ", ".join(k for k, v in t.distributed_backends.items() if v) or "none"
             if present(t.distributed_backends) else show(t.distributed_backends)),
        ]
        if present(t.loaded_libraries) and t.loaded_libraries:
            torch.append(("mapped libraries", ", ".join(f"{k}={v}" for k, v in sorted(t.loaded_libraries.items()))))
    elif present(t):
        torch = [("torch", f"installed ({show(t.version)}) but does not import: {show(t.error)}")]
    else:
        torch = [("torch", show(t))]
    ds = snap.deepspeed
    if present(ds):
        torch.append(("DeepSpeed", f"{show(ds.version)}, imports: {show(ds.importable)}"
                      + (f" ({ds.error})" if present(ds.error) else "")))
        if present(ds.ops) and isinstance(ds.ops, dict):
            torch.append(("DeepSpeed ops", op_report(ds.ops)))
    p = snap.python
    python = [
        ("python", f"{p.version} {show(p.implementation)} at {show(p.executable)}"),
        ("environment", f"{show(p.env_kind)}; externally managed (PEP 668): {show(p.externally_managed)}"),
        ("packages", ", ".join(f"{k}=={v}" for k, v in sorted(p.packages.items()) if not k.startswith("nvidia-"))
         if present(p.packages) else show(p.packages)),
    ]
    if present(snap.extensions):
        for ext in snap.extensions:
            python.append((f"extension {ext.name}", f"{show(ext.version)}; kernels: "
                           + (" ".join(ext.arch_list) if present(ext.arch_list) else show(ext.arch_list))))
    tk = snap.cuda_toolkit
    bt = snap.build_tools
    toolkit = [
        ("nvcc", (f"{tk.nvcc_version} at {show(tk.nvcc_path)}" if present(tk.nvcc_version) else show(tk.nvcc_version))
         if present(tk) else show(tk)),
        ("CUDA_HOME", show(tk.cuda_home) if present(tk) else show(tk)),
    ]
    if present(bt):
        toolkit.append(("build tools", f"ninja {show(bt.ninja)}; cc {show(bt.cc)}; libaio {show(bt.libaio)}"))
    libs = snap.libraries
    if present(libs):
        for name in ("cudnn", "nccl", "cudart", "cublas"):
            copies = getattr(libs, name)
            if present(copies) and copies:
                toolkit.append((f"system {name}", ", ".join(f"{show(c.version)} ({show(c.path)})" for c in copies)))
    net = snap.network
    network: List[Tuple[str, str]] = []
    if present(net) and present(net.interfaces):
        for i in net.interfaces:
            if i.kind == "loopback":
                continue
            network.append((i.name, f"{show(i.kind)}, {'up' if i.up is True else 'down'}, "
                                    f"{show(i.speed_mbps, ' Mb/s')}"))
    if present(net) and present(net.rdma_devices) and net.rdma_devices:
        network.append(("RDMA", ", ".join(f"{r.name} {show(r.state)} {show(r.link_layer)}" for r in net.rdma_devices)))
    if present(net):
        network.append(("nvidia-peermem", show(net.peermem_loaded)))
    fm = snap.fabric_manager
    if present(fm) and fm.nvswitch_present is True:
        network.append(("Fabric Manager", f"running: {show(fm.running)}, version {show(fm.version)}"))
    env = [(k, env_value(k, v)) for k, v in sorted(snap.env.items()) if k != "PATH"] if present(snap.env) else []
    groups = [
        ("Machine", machine),
        ("Driver and GPUs", driver + gpus + _topology(snap)),
        ("PyTorch", torch),
        ("Python", python),
        ("CUDA toolkit and libraries", toolkit),
        ("Network", network or [("interfaces", "none recorded")]),
    ]
    if env:
        groups.append(("Environment", env))
    return groups


def _cpu(snap: Snapshot) -> str:
    c = snap.host.cpu
    if not present(c):
        return show(c)
    return f"{show(c.model)}, {show(c.physical_cores)} cores / {show(c.logical_cpus)} threads, {show(c.sockets)} socket(s)"


def _gpu(g: Gpu) -> str:
    parts = [show(g.name), sm(g), gib(g.memory_bytes)]
    if present(g.pcie):
        parts.append(f"PCIe gen {show(g.pcie.gen)}/{show(g.pcie.max_gen)} x{show(g.pcie.width)}/{show(g.pcie.max_width)}")
    if present(g.nvlink) and present(g.nvlink.links_active) and g.nvlink.links_active:
        parts.append(f"NVLink {g.nvlink.links_active} links v{show(g.nvlink.version)}")
    if present(g.numa_node):
        parts.append(f"NUMA {g.numa_node}")
    if g.mig_enabled is True:
        parts.append("MIG on")
    if g.persistence_mode is False:
        parts.append("persistence off")
    if present(g.ecc_uncorrected) and g.ecc_uncorrected:
        parts.append(f"{g.ecc_uncorrected} uncorrected ECC errors")
    return ", ".join(parts + _health(g))


def _health(g: Gpu) -> List[str]:
    """The health facts worth a word on the GPU's line: only what is off."""
    h = getattr(g, "health", None)
    if not present(h):
        return []
    parts: List[str] = []
    if isinstance(h.throttle_reasons, list) and h.throttle_reasons:
        parts.append("clocks slowed: " + ", ".join(h.throttle_reasons))
    if present(h.compute_mode) and h.compute_mode != "default":
        parts.append(f"compute mode {h.compute_mode}")
    if present(h.power_limit_w) and present(h.power_default_w) and h.power_limit_w < h.power_default_w:
        parts.append(f"power cap {h.power_limit_w:g}/{h.power_default_w:g} W")
    if present(h.row_remap) and (h.row_remap.pending is True or h.row_remap.failed is True):
        parts.append("row remap " + ("failed" if h.row_remap.failed is True else "pending"))
    bad_links = [e for e in (h.nvlink_errors if isinstance(h.nvlink_errors, list) else [])
                 if any(present(v) and v for v in (e.crc_flit, e.crc_data, e.replay, e.recovery))]
    if bad_links:
        parts.append(f"NVLink errors on {len(bad_links)} link(s)")
    if isinstance(h.xids, list) and h.xids:
        parts.append(f"{len(h.xids)} Xid event(s) since boot")
    return parts


def _topology(snap: Snapshot) -> List[Tuple[str, str]]:
    topo = snap.topology
    if not present(topo) or len(topo.links) < 2:
        return []
    rows = [("links", "      " + " ".join(f"GPU{j:<2}" for j in range(len(topo.links))))]
    for i, row in enumerate(topo.links):
        rows.append(("", f"GPU{i:<2}  " + " ".join(f"{c:<5}" for c in row)))
    return rows


def render_facts(snap: Snapshot) -> str:
    lines: List[str] = []
    for title, items in fact_groups(snap):
        lines.append(title)
        width = max((len(label) for label, _ in items), default=0)
        for label, value in items:
            lines.append(f"  {label:<{width}}  {value}")
        lines.append("")
    lines.append("Probes")
    for p in snap.probes:
        err = f" — {p.error}" if present(p.error) else ""
        lines.append(f"  {p.name:<15} {p.status:<8} {show(p.seconds, 's')}{err}")
    return "\n".join(lines) + "\n"
