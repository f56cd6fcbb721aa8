"""`selftest gpu`'s numbers against the datasheet (rules/tables/gpu_peaks.json), and what `--stress` found: the
memory pattern test, the burn, and the health counters' growth during the run (gpu_watch.py) as findings."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from envdoctor.findings import Finding
from envdoctor.fixes import manual
from envdoctor.rules.tables import Tables
from envdoctor.selftest.gpu_watch import nvlink_growth

# Below this share of its dense datasheet peak, a large bf16/fp16 matmul means a throttled, capped or broken GPU
# (a healthy data-centre GPU reaches 0.6-0.8 of it).
SLOW_SHARE = 0.4
# Clock-event reasons that mean trouble during a burn (sw_power_cap at full load is the GPU working as designed).
TROUBLE_REASONS = ("hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown", "sw_thermal_slowdown")
_TENSOR_DTYPES = ("bfloat16", "float16")


def peaks(devices: List[Dict[str, Any]], stress: Optional[Dict[str, Any]], tables: Tables) -> List[Dict[str, Any]]:
    """Per CUDA device: its datasheet row and the share of each peak the checks (and the burn) reached."""
    burns = {b.get("device"): b for b in (stress or {}).get("burn", [])}
    out: List[Dict[str, Any]] = []
    for d in devices:
        name = d.get("name")
        if not name:
            continue  # the CPU run of the tests: no datasheet
        row = tables.peak_for(name)
        entry: Dict[str, Any] = {"device": d.get("device"), "name": name}
        if row is None:
            entry["why"] = f"{name!r} is not in gpu_peaks.json"
            out.append(entry)
            continue
        entry.update(model=row.model, source=row.source, peak_tflops=dict(row.tflops))
        achieved = {k: m.get("tflops") for k, m in (d.get("matmul") or {}).items()}
        entry["of_peak"] = {k: round(v / row.tflops[k], 3) for k, v in achieved.items()
                            if isinstance(v, (int, float)) and row.tflops.get(k)}
        burn = burns.get(d.get("device"))
        if burn and burn.get("tflops") and row.tflops.get(burn.get("dtype")):
            entry["burn_of_peak"] = round(burn["tflops"] / row.tflops[burn["dtype"]], 3)
        out.append(entry)
    return out


def slow_findings(rows: List[Dict[str, Any]]) -> List[Finding]:
    """A warning per GPU whose best tensor-core matmul (the burn's when it ran) is below SLOW_SHARE of its peak."""
    found: List[Finding] = []
    for r in rows:
        shares = [v for k, v in (r.get("of_peak") or {}).items() if k in _TENSOR_DTYPES]
        if "burn_of_peak" in r:
            shares.append(r["burn_of_peak"])
        if not shares or max(shares) >= SLOW_SHARE:
            continue
        best = max(shares)
        found.append(Finding(
            id="SELFTEST-GPU-SLOW", severity="warning", category="gpu_clocks_slowed",
            title=f"{r['device']} ({r['name']}) reached {best:.0%} of its datasheet matmul peak",
            detail=f"The best bf16/fp16 matmul reached {best:.0%} of the {r['model']} dense peak "
                   f"({r['peak_tflops']}); a healthy one reaches 60-80%. Clocks held down (throttling, a power "
                   f"cap, clocks set below base), another process on the GPU, or a degraded GPU. Source: {r['source']}",
            remedy=manual("Run `envdoctor check` (throttle reasons, power limit, clocks, compute mode) and "
                          "`nvidia-smi -q -d PERFORMANCE,CLOCK,POWER`; run the test again on an idle GPU."),
            subjects=[f"gpu:{str(r['device']).rpartition(':')[2]}"],
        ))
    return found


def stress_metrics(stress: Dict[str, Any], watched: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    """The stress phase's metrics: what the worker measured and what the watch saw."""
    return {"seconds": stress.get("seconds"), "memory": stress.get("memory", []), "burn": stress.get("burn", []),
            "health": watched if watched is not None else {"error": "not watched"}}


def stress_findings(m: Dict[str, Any]) -> List[Finding]:
    """Errors for corrupted memory, wrong products, and ECC/Xid growth; warnings for NVLink growth and throttling."""
    found: List[Finding] = []
    for mem in m.get("memory", []):
        bad = {k: v for k, v in (mem.get("mismatches") or {}).items() if v}
        if bad:
            found.append(Finding(
                id="SELFTEST-GPU-MEMORY-PATTERN", severity="error", category="gpu_memory_faulty",
                title=f"{mem['device']}: memory read back differs from what was written",
                detail=f"Pattern test over {mem.get('bytes', 0) / 2 ** 30:.1f} GiB: mismatched 32-bit words per "
                       f"pattern {bad}. The GPU's memory (or its ECC) is failing.",
                remedy=manual("Drain the node; run `dcgmi diag -r 3` and check `nvidia-smi -q -d ECC,ROW_REMAPPER`; "
                              "an RMA case if it repeats after a GPU reset."),
                subjects=[f"gpu:{str(mem['device']).rpartition(':')[2]}"],
            ))
    for b in m.get("burn", []):
        if not b.get("ok", True):
            found.append(Finding(
                id="SELFTEST-GPU-BURN-WRONG", severity="error", category="gpu_compute_wrong",
                title=f"{b['device']}: the same matmul gave different results during the burn",
                detail=f"Repeated {b['dtype']} products of the same inputs differed from the first by up to "
                       f"{b.get('max_rel_dev', 0):.3g} (relative): the GPU computes wrong under load (heat, power, a "
                       "failing chip).",
                remedy=manual("Drain the node and run `dcgmi diag -r 3`; check cooling and power; RMA if it repeats."),
                subjects=[f"gpu:{str(b['device']).rpartition(':')[2]}"],
            ))
    health = m.get("health") or {}
    for g in health.get("gpus", []):
        subject = [f"gpu:{g['index']}"]
        label = f"GPU {g['index']} ({g.get('name') or 'unnamed'})"
        ecc = g.get("ecc_uncorrected_delta")
        if isinstance(ecc, int) and ecc > 0:
            found.append(Finding(
                id="SELFTEST-GPU-ECC-GREW", severity="error", category="ecc_errors",
                title=f"{label}: {ecc} new uncorrected ECC error(s) during the stress run",
                detail="The volatile uncorrected ECC count grew while the GPU was under load.",
                remedy=manual("Drain the node; reset the GPU (`sudo nvidia-smi -r -i N`) so pending remaps take effect; "
                              "RMA if it repeats."),
                subjects=subject,
            ))
        xids = g.get("xids_new")
        if isinstance(xids, list) and xids:
            codes = ", ".join(sorted({str(x["code"]) for x in xids}))
            found.append(Finding(
                id="SELFTEST-GPU-XID", severity="error", category="gpu_xid_hardware",
                title=f"{label}: Xid {codes} logged during the stress run",
                detail="; ".join(f"Xid {x['code']}: {x.get('text') or ''}" for x in xids[:10]),
                remedy=manual("Look the codes up in NVIDIA's Xid catalog (docs.nvidia.com/deploy/xid-errors); drain the "
                              "node for hardware codes (48, 63, 64, 74, 79, 92, 94, 95)."),
                subjects=subject,
            ))
        grown = nvlink_growth(g)
        if grown:
            found.append(Finding(
                id="SELFTEST-GPU-NVLINK-GREW", severity="warning", category="nvlink_errors",
                title=f"{label}: NVLink error counters grew during the stress run",
                detail="; ".join(grown) + ". A count that grows under load marks a failing link.",
                remedy=manual("Run `nvidia-smi nvlink -e` again after a longer burn; if it keeps growing, drain the node "
                              "and have the link hardware inspected."),
                subjects=subject,
            ))
        trouble = {r: n for r, n in (g.get("throttle_seen") or {}).items() if r in TROUBLE_REASONS}
        if trouble:
            found.append(Finding(
                id="SELFTEST-GPU-THROTTLED", severity="warning", category="gpu_clocks_slowed",
                title=f"{label} slowed its clocks during the stress run ({', '.join(sorted(trouble))})",
                detail=f"Clock-event reasons seen in {health.get('samples', 0)} samples: {trouble}. Hardware or thermal "
                       "slowdown under load makes this GPU the slowest rank of every job.",
                remedy=manual("Check the node's cooling and power supply (`nvidia-smi -q -d PERFORMANCE,TEMPERATURE`)."),
                subjects=subject,
            ))
    return found
