"""Node-to-node bandwidth over a torch.distributed process group: every ordered pair once, in rounds of
disjoint pairs, point-to-point send/recv with an acknowledgement per message; the best of `iters`
messages counts. Torch is passed in by the caller (`collect.py`), which has already imported it."""

from __future__ import annotations

import os
import time
from typing import Any, Callable, List, Optional, Sequence, Tuple

# Test hook at the transport boundary: seconds slept after each send and receive on this node.
DELAY_ENV = "ENVDOCTOR_TEST_FLEET_P2P_DELAY_S"


def rounds(n: int) -> List[List[Tuple[int, int]]]:
    """The circle method: n-1 rounds (n odd: n, one node sitting out each) in which every node is in at most
    one pair, and every unordered pair meets exactly once."""
    players: List[Optional[int]] = list(range(n)) + ([None] if n % 2 else [])
    out = []
    for _ in range(len(players) - 1):
        half = len(players) // 2
        out.append([(a, b) for a, b in ((players[i], players[-1 - i]) for i in range(half))
                    if a is not None and b is not None])
        players = [players[0], players[-1], *players[1:-1]]
    return out


def _delay() -> float:
    try:
        return max(0.0, float(os.environ.get(DELAY_ENV, "0") or 0))
    except ValueError:
        return 0.0


def measure_row(dist: Any, torch: Any, rank: int, world: int, device: str, nbytes: int, iters: int,
                progress: Callable[[str], None]) -> List[Optional[float]]:
    """This rank's row: GB/s from it to every other rank (None to itself). Every rank must call it."""
    delay = _delay()
    sync: Callable[[], None] = (lambda: torch.cuda.synchronize(device)) if device.startswith("cuda") else (lambda: None)

    def p2p(op: Callable[..., Any], tensor: Any, peer: int) -> None:
        op(tensor, peer)
        if delay:
            time.sleep(delay)

    data = torch.ones(max(1, nbytes // 4), dtype=torch.float32, device=device)
    ack = torch.zeros(1, dtype=torch.float32, device=device)
    row: List[Optional[float]] = [None] * world
    plan = rounds(world)
    for number, pairs in enumerate(plan, 1):
        for a, b in pairs:
            if rank not in (a, b):
                continue
            for src, dst in ((a, b), (b, a)):
                if rank == src:
                    row[dst] = _send_timed(p2p, dist, data, ack, dst, iters, sync)
                elif rank == dst:
                    for _ in range(iters + 1):
                        p2p(dist.recv, data, src)
                        p2p(dist.send, ack, src)
                    sync()
        progress(f"bandwidth round {number}/{len(plan)} done")
    return row


def _send_timed(p2p: Callable[..., None], dist: Any, data: Any, ack: Any, dst: int, iters: int,
                sync: Callable[[], None]) -> float:
    p2p(dist.send, data, dst)  # warm-up: connection setup is not bandwidth
    p2p(dist.recv, ack, dst)
    sync()
    best = float("inf")
    for _ in range(iters):  # the best round trip: interference only ever slows a transfer down
        start = time.perf_counter()
        p2p(dist.send, data, dst)
        p2p(dist.recv, ack, dst)
        sync()
        best = min(best, time.perf_counter() - start)
    return data.numel() * data.element_size() / max(best, 1e-9) / 1e9


def matrix_from_rows(rows: Sequence[Sequence[Optional[float]]]) -> List[List[Optional[float]]]:
    return [[None if i == j or v is None else round(float(v), 3) for j, v in enumerate(row)]
            for i, row in enumerate(rows)]
