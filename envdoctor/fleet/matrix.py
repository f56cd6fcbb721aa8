"""Reading a node-to-node bandwidth matrix: which node, or which link, is slow (pure).

A transfer is bounded by its slower end, so a node's capacity is estimated as the best transfer it took
part in (either direction). A node whose capacity is below `ratio` x the median capacity is slow. A link
between two nodes that are not slow is slow on its own when it is below `ratio` x what is typical for its
ends: the median of each end's transfers with the nodes that are not slow, the lesser of the two (a median,
not the best, so that one lucky transfer elsewhere does not make an ordinary one look slow).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import median
from typing import List, Optional, Sequence, Tuple

Matrix = Sequence[Sequence[Optional[float]]]  # [i][j]: GB/s from node i to node j; None on the diagonal


@dataclass
class MatrixVerdict:
    capacity_gbps: List[Optional[float]]  # per node: the best transfer it took part in
    median_gbps: Optional[float]  # the median capacity
    slow_nodes: List[int] = field(default_factory=list)
    slow_links: List[Tuple[int, int]] = field(default_factory=list)  # (sender, receiver)


def _entries(matrix: Matrix, i: int) -> List[float]:
    n = len(matrix)
    out = [v for j in range(n) if j != i for v in (matrix[i][j], matrix[j][i]) if v is not None]
    return out


def _typical(matrix: Matrix, i: int, slow: List[int]) -> Optional[float]:
    vals = [v for j in range(len(matrix)) if j != i and j not in slow for v in (matrix[i][j], matrix[j][i])
            if v is not None]
    return median(vals) if vals else None


def analyse(matrix: Matrix, ratio: float) -> MatrixVerdict:
    n = len(matrix)
    caps: List[Optional[float]] = []
    for i in range(n):
        vals = _entries(matrix, i)
        caps.append(max(vals) if vals else None)
    known = [c for c in caps if c is not None]
    if n < 3 or len(known) < 3:  # with two nodes, which end is slow cannot be told apart
        return MatrixVerdict(caps, median(known) if known else None)
    mid = median(known)
    slow_nodes = [i for i, c in enumerate(caps) if c is not None and c < ratio * mid]
    typical = [_typical(matrix, i, slow_nodes) for i in range(n)]
    slow_links = []
    for i in range(n):
        for j in range(n):
            v = matrix[i][j]
            if i == j or v is None or i in slow_nodes or j in slow_nodes:
                continue
            ti, tj = typical[i], typical[j]
            if ti is not None and tj is not None and v < ratio * min(ti, tj):
                slow_links.append((i, j))
    return MatrixVerdict(caps, mid, slow_nodes, slow_links)
