"""Run every probe concurrently, each under its own deadline, and assemble the snapshot.

The torch probe starts first (it is the slowest: it imports torch); everything else overlaps it.
A probe that raises becomes a `failed` record, one that overruns its deadline a `timeout` record,
and the sections it owns are marked `ProbeFailed`, so the snapshot always comes back.
"""

from __future__ import annotations

import importlib
import queue
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Dict, Iterable, List, Optional, Tuple

from envdoctor.probes.base import ProbeContext, ProbeOutput, ProbeSkipped
from envdoctor.probes.children_run import ChildError

if TYPE_CHECKING:
    from envdoctor.snapshot import ProbeRecord, Snapshot


def _env_probe(ctx: ProbeContext) -> ProbeOutput:
    from envdoctor.redact import relevant_env

    return ProbeOutput({"env": relevant_env(ctx.env)})


def _lazy(module: str, name: str = "probe") -> Callable:
    """`module.probe` (or another function of it), imported by the probe's own thread when it runs, so torch's
    child starts while the other probes' modules (NVML's bindings, psutil) are still loading."""
    def call(*args: object) -> object:
        return getattr(importlib.import_module(module), name)(*args)

    return call


@dataclass(frozen=True)
class ProbeSpec:
    """One probe and what it declares: the snapshot sections it `provides` (marked failed or skipped with it),
    the values it `shares` with other probes (ProbeOutput.shared), and the sections or shared values its
    `merge(snapshot, needed)` reads once every probe has finished (`needs`)."""

    name: str
    fn: Callable[[ProbeContext], ProbeOutput]
    provides: Tuple[str, ...]
    slow: bool = False  # uses ctx.torch_timeout rather than ctx.timeout
    shares: Tuple[str, ...] = ()
    needs: Tuple[str, ...] = ()
    merge: Optional[Callable[[Snapshot, Dict[str, object]], None]] = None


PROBES: Tuple[ProbeSpec, ...] = (
    ProbeSpec("torch", _lazy("envdoctor.probes.torch_probe"), ("torch", "deepspeed", "requirement_conflicts"),
              slow=True, shares=("extension_imports",)),
    ProbeSpec("python", _lazy("envdoctor.probes.pyenv"), ("python", "extensions"),
              needs=("extension_imports", "deepspeed"), merge=_lazy("envdoctor.probes.pyenv", "merge")),
    ProbeSpec("nvml", _lazy("envdoctor.probes.gpu"), ("driver", "gpus", "topology")),
    ProbeSpec("system", _lazy("envdoctor.probes.system"), ("host",)),
    ProbeSpec("cuda_libraries", _lazy("envdoctor.probes.cuda_libs"), ("libraries",), shares=("libaio",)),
    ProbeSpec("cuda_toolkit", _lazy("envdoctor.probes.toolkit"), ("cuda_toolkit", "build_tools"),
              needs=("libaio",), merge=_lazy("envdoctor.probes.toolkit", "merge")),
    ProbeSpec("network", _lazy("envdoctor.probes.network"), ("network", "fabric_manager")),
    ProbeSpec("env", _env_probe, ("env",)),
)
PROBE_NAMES = tuple(p.name for p in PROBES)


@dataclass
class ProbeEvent:
    """One finished probe, as the TUI streams them."""

    record: ProbeRecord
    output: Optional[ProbeOutput]


def _run_one(spec: ProbeSpec, ctx: ProbeContext, out: queue.Queue[Tuple[str, ProbeRecord, Optional[ProbeOutput]]]) -> None:
    start = time.monotonic()
    result: Optional[ProbeOutput] = None
    try:
        result = spec.fn(ctx)
        status, error = result.status, result.note
        undeclared = sorted(set(result.sections) - set(spec.provides)) + sorted(set(result.shared) - set(spec.shares))
        if undeclared:  # a probe bug: its spec says what it may fill in
            status, error, result = "failed", f"the {spec.name} probe returned undeclared {', '.join(undeclared)}", None
    except ProbeSkipped as exc:
        status, error = "skipped", str(exc)
    except ChildError as exc:
        status = "timeout" if exc.result.error and exc.result.error.startswith("timed out") else "failed"
        error = str(exc)
    except BaseException as exc:  # a probe bug must not cost the snapshot
        status, error = "failed", f"{type(exc).__name__}: {exc}"
    from envdoctor.snapshot import ProbeRecord  # after the probe: the torch probe's child starts sooner

    out.put((spec.name, ProbeRecord(name=spec.name, status=status, seconds=_secs(start), error=error), result))


def _secs(start: float) -> float:
    return round(time.monotonic() - start, 3)


class ProbingCancelled(Exception):
    """`run_probes` was told to stop waiting (its caller is going away); no snapshot."""


CANCEL_POLL = 0.1  # seconds between looks at `cancelled`


def run_probes(
    ctx: ProbeContext,
    only: Optional[Iterable[str]] = None,
    on_event: Optional[Callable[[ProbeEvent], None]] = None,
    meanwhile: Optional[Callable[[], None]] = None,
    cancelled: Optional[Callable[[], bool]] = None,
) -> Snapshot:
    """Probe this machine; never raises for a probe's sake. `meanwhile` runs in this thread once every
    probe has started (a command's own preparation, overlapping the torch import). `cancelled`, asked every
    CANCEL_POLL seconds while probes run, ends the wait with ProbingCancelled (the probes' threads are daemons:
    what they run ends with this process, or at once with `processes.stop_all`)."""
    specs = [p for p in PROBES if only is None or p.name in set(only)]
    results: queue.Queue[Tuple[str, ProbeRecord, Optional[ProbeOutput]]] = queue.Queue()
    start = time.monotonic()
    deadlines: Dict[str, float] = {}
    for spec in specs:
        limit = (ctx.torch_timeout if spec.slow else ctx.timeout) + 2.0  # grace over the child's own timeout
        deadlines[spec.name] = start + limit
        threading.Thread(target=_run_one, args=(spec, ctx, results), name=f"probe-{spec.name}", daemon=True).start()
    if meanwhile is not None:
        meanwhile()
    from envdoctor.snapshot import ProbeRecord

    done: Dict[str, Tuple[ProbeRecord, Optional[ProbeOutput]]] = {}
    while len(done) < len(specs):
        pending = [s.name for s in specs if s.name not in done]
        if cancelled is not None and cancelled():
            raise ProbingCancelled()
        until = min(deadlines[n] for n in pending)
        wait = max(0.0, until - time.monotonic())
        try:
            name, record, output = results.get(timeout=wait if cancelled is None else min(wait, CANCEL_POLL))
        except queue.Empty:
            now = time.monotonic()
            if now < until:
                continue
            for n in pending:
                if deadlines[n] <= now and n not in done:
                    rec = ProbeRecord(name=n, status="timeout", seconds=round(now - start, 3),
                                      error=f"no answer within {deadlines[n] - start:.0f}s")
                    done[n] = (rec, None)
                    if on_event:
                        on_event(ProbeEvent(rec, None))
            continue
        if name in done:  # finished after its deadline was already recorded
            continue
        done[name] = (record, output)
        if on_event:
            on_event(ProbeEvent(record, output))
    return assemble([done[s.name] for s in specs], [s for s in specs])


def assemble(results: List[Tuple[ProbeRecord, Optional[ProbeOutput]]], specs: List[ProbeSpec]) -> Snapshot:
    """The snapshot of the probes' results: each probe's sections (or its failure on the sections it provides),
    then each finished probe's `merge` with the values it needs."""
    from envdoctor.snapshot import Host, ProbeFailed, PythonEnv, Snapshot, Unavailable, now_iso

    snap = Snapshot(created=now_iso(), host=Host(), python=PythonEnv(version="unknown"))
    shared: Dict[str, object] = {}
    merges = []
    for (record, output), spec in zip(results, specs):
        snap.probes.append(record)
        if output is None:
            marker = (Unavailable(str(record.error)) if record.status == "skipped"
                      else ProbeFailed(f"{spec.name} probe {record.status}: {record.error}"))
            for section in spec.provides:
                _mark(snap, section, marker)
            continue
        for key, value in output.sections.items():
            setattr(snap, key, value)
        shared.update(output.shared)
        if spec.merge is not None:
            merges.append(spec)
    for spec in merges:  # after every section is in: a merge may read another probe's section
        assert spec.merge is not None
        spec.merge(snap, {name: shared[name] if name in shared else getattr(snap, name) for name in spec.needs
                          if name in shared or hasattr(snap, name)})
    return snap


def _mark(snap: Snapshot, section: str, marker: object) -> None:
    from envdoctor.snapshot import Host, PythonEnv, Unavailable

    if section == "gpus":
        # A skipped probe found no NVIDIA driver anywhere: no GPU is usable. A failed one knows nothing.
        snap.gpus = [] if isinstance(marker, Unavailable) else marker  # type: ignore[assignment]
    elif section == "host":
        snap.host = Host(os="other", arch="unknown")
        snap.host.extra["error"] = str(marker)
    elif section == "python":
        snap.python = PythonEnv(version="unknown", executable=marker, packages=marker)  # type: ignore[arg-type]
    else:
        setattr(snap, section, marker)
