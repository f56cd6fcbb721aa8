"""A person's view of `pip download --progress-bar raw`: per file, a line when it starts and one when it is done
(size, time, rate); on a terminal also a live line with bytes, rate and ETA. pip's `Progress N of M` lines are
never echoed, so a log gets two lines per wheel, not thousands."""

from __future__ import annotations

import re
import time
import urllib.parse
from typing import Callable, Optional

from packaging.version import InvalidVersion, Version

from envdoctor.byte_sizes import format_bytes

_START = re.compile(r"^\s*Downloading (?:\S*/)?(?P<file>[^\s/]+)(?: \((?P<size>[^)]*)\))?\s*$")
_PROGRESS = re.compile(r"^\s*Progress (?P<done>\d+) of (?P<total>\d+)\s*$")
RAW_SINCE = Version("24.1")  # the first pip with --progress-bar raw


def progress_bar_option(pip_version: Optional[str]) -> str:
    """`raw` when the pip that downloads knows it, else `off`."""
    try:
        return "raw" if pip_version and Version(pip_version) >= RAW_SINCE else "off"
    except InvalidVersion:
        return "off"


def human_bytes(n: float) -> str:
    return format_bytes(n, decimal=True, digits=1)


def _duration(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"


class DownloadMeter:
    """Feed it every line pip prints (`line`); it calls `say` with the lines worth keeping and `live` (when
    given: a terminal) with a status line at most every `interval` seconds."""

    def __init__(self, say: Callable[[str], None], live: Optional[Callable[[str], None]] = None,
                 clock: Callable[[], float] = time.monotonic, interval: float = 0.5) -> None:
        self.say, self.live, self.clock, self.interval = say, live, clock, interval
        self.file: Optional[str] = None
        self.started = 0.0
        self.last_live = float("-inf")
        self.total = 0

    def line(self, text: str) -> None:
        m = _PROGRESS.match(text)
        if m:
            self._progress(int(m["done"]), int(m["total"]))
            return
        m = _START.match(text)
        if m:
            self.file, self.started, self.total = urllib.parse.unquote(m["file"]), self.clock(), 0
            self.last_live = float("-inf")
            self.say(f"downloading {self.file}" + (f" ({m['size']})" if m["size"] else ""))
            return
        self.say(text)

    def _progress(self, done: int, total: int) -> None:
        if self.file is None:
            return
        self.total = total
        now = self.clock()
        if done >= total > 0:
            self._finish()
            return
        if self.live is None or now - self.last_live < self.interval:
            return
        self.last_live = now
        self.live(self.status(done, total, now - self.started))

    def status(self, done: int, total: int, elapsed: float) -> str:
        rate = done / elapsed if elapsed > 0 else 0.0
        eta = f", ETA {_duration((total - done) / rate)}" if rate > 0 and total > done else ""
        pct = f" ({100 * done // total}%)" if total else ""
        return (f"{self.file}: {human_bytes(done)} of {human_bytes(total)}{pct}, "
                f"{human_bytes(rate)}/s{eta}")

    def _finish(self) -> None:
        elapsed = max(self.clock() - self.started, 0.0)
        rate = f", {human_bytes(self.total / elapsed)}/s" if elapsed > 0 else ""
        self.say(f"downloaded {self.file}: {human_bytes(self.total)} in {_duration(elapsed)}{rate}")
        self.file = None

    def close(self) -> None:
        """The command ended: a file that never reported its end gets no 'downloaded' line."""
        self.file = None
