"""Predicates of the GPU health rules (rules/gpu_health.json): the comparisons of two facts of one GPU's
`health` that the condition language cannot write. Each returns None when a fact it needs is unknown."""

from __future__ import annotations

from typing import Any, List

from envdoctor.rules.conditions import Context, predicate
from envdoctor.rules.predicates import Result
from envdoctor.snapshot import known_list, present

# How far below its slowdown threshold a GPU counts as running at it (degrees C).
SLOWDOWN_MARGIN_C = 5


def _health(ctx: Context) -> Any:
    h = getattr(ctx.bound["gpu"], "health", None)
    return h if present(h) else None


@predicate("limit_w", "default_w")
def power_limit_below_default(ctx: Context) -> Result:
    """The power limit in force is below the board's default."""
    h = _health(ctx)
    if h is None or not (present(h.power_limit_w) and present(h.power_default_w)):
        return None
    if h.power_limit_w >= h.power_default_w:
        return None
    return {"limit_w": f"{h.power_limit_w:g}", "default_w": f"{h.power_default_w:g}",
            "evidence": [f"power limit {h.power_limit_w:g} W, default {h.power_default_w:g} W"]}


@predicate("margin_c")
def temperature_near_slowdown(ctx: Context) -> Result:
    """The GPU is within SLOWDOWN_MARGIN_C of (or above) the temperature where it slows its clocks."""
    h = _health(ctx)
    if h is None or not (present(h.temperature_c) and present(h.slowdown_temperature_c)):
        return None
    margin = h.slowdown_temperature_c - h.temperature_c
    if margin > SLOWDOWN_MARGIN_C:
        return None
    return {"margin_c": margin,
            "evidence": [f"{h.temperature_c} C now, slowdown at {h.slowdown_temperature_c} C"]}


@predicate("app_mhz", "base_mhz")
def clocks_below_base(ctx: Context) -> Result:
    """The graphics application clock is set below its default (base) value."""
    h = _health(ctx)
    if h is None or not (present(h.app_clock_mhz) and present(h.default_app_clock_mhz)):
        return None
    if h.app_clock_mhz >= h.default_app_clock_mhz:
        return None
    return {"app_mhz": h.app_clock_mhz, "base_mhz": h.default_app_clock_mhz,
            "evidence": [f"application clock {h.app_clock_mhz} MHz, default {h.default_app_clock_mhz} MHz"]}


@predicate("links")
def nvlink_errors_counted(ctx: Context) -> Result:
    """Some active NVLink counted CRC errors, replays or recoveries since the driver loaded."""
    h = _health(ctx)
    if h is None:
        return None
    lines: List[str] = []
    for e in known_list(h.nvlink_errors):
        counts = [(name, getattr(e, key)) for key, name in
                  (("crc_flit", "CRC flit"), ("crc_data", "CRC data"), ("replay", "replay"), ("recovery", "recovery"))]
        bad = [f"{v} {name}" for name, v in counts if present(v) and v > 0]
        if bad:
            lines.append(f"link {e.link}: " + ", ".join(bad))
    if not lines:
        return None
    return {"links": "; ".join(lines), "evidence": lines}


@predicate("codes", "events")
def xid_codes(ctx: Context) -> Result:
    """The Xid codes logged for this GPU since boot (any), for the templates."""
    h = _health(ctx)
    xids = known_list(h.xids) if h is not None else []
    if not xids:
        return None
    codes = sorted({x.code for x in xids})
    lines = [f"Xid {x.code}: {x.text}" if present(x.text) else f"Xid {x.code}" for x in xids[:10]]
    more = f" (and {len(xids) - 10} more)" if len(xids) > 10 else ""
    return {"codes": ", ".join(str(c) for c in codes), "events": "; ".join(lines) + more, "evidence": lines}
