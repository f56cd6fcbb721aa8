"""Members of a remote wheel read through HTTP range requests, never the whole file.

A wheel is a zip: its end-of-central-directory record sits in the last bytes, the central directory just
before it, and each member behind a local header at the offset the directory gives. `RangedZip` reads the tail
(one request), the directory (one more when the tail does not hold it) and then only the members asked for, so
a 500 MB torch wheel costs its directory (about 2 MB) plus the few KB of METADATA. Requests go through a
`RangeGet(url, start, end) -> bytes` the caller passes in (`urllib_range_get` is the stdlib one); `bytes_read`
counts what came back.
"""

from __future__ import annotations

import struct
import urllib.request
import zlib
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional

RangeGet = Callable[[str, int, int], bytes]  # bytes [start, end] inclusive; start < 0: the last -start bytes
TAIL = 1 << 16  # the EOCD record (22 bytes) plus the longest comment a zip can carry
# What one read may ask a server for or inflate: a wheel's central directory is a few MB, the members read
# (METADATA, version.py, a variant's JSON) a few KB; a zip64 field or a deflate stream that claims more is refused.
MAX_DIRECTORY = 64 << 20
MAX_MEMBER = 64 << 20
_EOCD = b"PK\x05\x06"
_EOCD64_LOCATOR = b"PK\x06\x07"
_EOCD64 = b"PK\x06\x06"
_CENTRAL = b"PK\x01\x02"
_LOCAL = b"PK\x03\x04"


class NotAZip(ValueError):
    """The bytes read are not a zip archive's (no end-of-central-directory record, a broken entry)."""


@dataclass(frozen=True)
class Member:
    name: str
    method: int  # 0 stored, 8 deflated
    compressed: int
    size: int
    offset: int  # of its local header


def urllib_range_get(timeout: float = 30.0, user_agent: str = "envdoctor-refresh-facts") -> RangeGet:
    """A RangeGet over urllib: refuses a server that ignores Range (a 200 would be the whole wheel)."""

    def get(url: str, start: int, end: int) -> bytes:
        spec = f"bytes={start}" if start < 0 else f"bytes={start}-{end}"
        req = urllib.request.Request(url, headers={"Range": spec, "User-Agent": user_agent})
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            if resp.status != 206:
                raise OSError(f"{url}: the server ignored the Range request (HTTP {resp.status}); not reading the whole file")
            want = -start if start < 0 else end - start + 1
            return resp.read(want + 1)[:want]

    return get


class RangedZip:
    """The central directory of the zip at `url`, read on creation; `read(name)` fetches one member."""

    def __init__(self, url: str, get: RangeGet, tail: int = TAIL) -> None:
        self.url, self._get = url, get
        self.bytes_read = 0
        self.requests = 0
        end = self._fetch(-tail, -1)
        pos = end.rfind(_EOCD)
        if pos < 0 or len(end) - pos < 22:
            raise NotAZip(f"{url}: no end-of-central-directory record in the last {len(end)} bytes")
        _sig, _d, _cd, _n1, count, cd_size, cd_offset, _clen = struct.unpack("<4sHHHHIIH", end[pos:pos + 22])
        dir_end = cd_offset + cd_size  # the file offset where the record after the directory starts
        tail_at = dir_end - pos  # the file offset of end[0], when the EOCD follows the directory directly
        if cd_offset == 0xFFFFFFFF or cd_size == 0xFFFFFFFF or count == 0xFFFF:
            loc = end.rfind(_EOCD64_LOCATOR, 0, pos)
            if loc < 0:
                raise NotAZip(f"{url}: zip64 archive without its end-of-central-directory locator")
            (rec_offset,) = struct.unpack("<Q", end[loc + 8:loc + 16])
            rel = end.rfind(_EOCD64, 0, loc)
            rec = end[rel:rel + 56] if rel >= 0 else self._fetch(rec_offset, rec_offset + 55)
            if rec[:4] != _EOCD64:
                raise NotAZip(f"{url}: broken zip64 end-of-central-directory record")
            cd_size, cd_offset = struct.unpack("<QQ", rec[40:56])
            tail_at = rec_offset - rel if rel >= 0 else -1
        if cd_size > MAX_DIRECTORY:
            raise NotAZip(f"{url}: central directory of {cd_size} bytes, more than the {MAX_DIRECTORY} read")
        lo = cd_offset - tail_at
        cd = end[lo:lo + cd_size] if tail_at >= 0 and lo >= 0 else b""
        if len(cd) != cd_size or cd[:4] != _CENTRAL:
            cd = self._fetch(cd_offset, cd_offset + cd_size - 1)
        self.members: Dict[str, Member] = {m.name: m for m in _parse_central(cd, url)}

    def _fetch(self, start: int, end: int) -> bytes:
        data = self._get(self.url, start, end)
        self.bytes_read += len(data)
        self.requests += 1
        return data

    def names(self) -> List[str]:
        return list(self.members)

    def find(self, predicate: Callable[[str], bool]) -> Optional[str]:
        return next((n for n in self.members if predicate(n)), None)

    def read(self, name: str) -> bytes:
        """One member's bytes, decompressed: its local header and data, one request."""
        m = self.members[name]
        if m.compressed > MAX_MEMBER or m.size > MAX_MEMBER:
            raise NotAZip(f"{self.url}: {name}: {max(m.compressed, m.size)} bytes, more than the {MAX_MEMBER} read")
        slack = 30 + len(name.encode()) + 1024  # the local extra field may differ from the central one
        raw = self._fetch(m.offset, m.offset + slack + m.compressed - 1)
        if raw[:4] != _LOCAL:
            raise NotAZip(f"{self.url}: {name}: no local header at offset {m.offset}")
        nlen, elen = struct.unpack("<HH", raw[26:30])
        start = 30 + nlen + elen
        if start + m.compressed > len(raw):
            raw += self._fetch(m.offset + len(raw), m.offset + start + m.compressed - 1)
        data = raw[start:start + m.compressed]
        if m.method == 0:
            return data
        if m.method == 8:
            inflate = zlib.decompressobj(-15)
            out = inflate.decompress(data, min(m.size, MAX_MEMBER) + 1)  # one byte past the stated size stops it
            if len(out) > MAX_MEMBER or len(out) > m.size:
                raise NotAZip(f"{self.url}: {name}: inflates past its stated size of {m.size} bytes")
            return out
        raise NotAZip(f"{self.url}: {name}: compression method {m.method} is not stored or deflated")


def _parse_central(cd: bytes, url: str) -> List[Member]:
    out: List[Member] = []
    pos = 0
    while pos + 46 <= len(cd) and cd[pos:pos + 4] == _CENTRAL:
        (method, _t, _dte, _crc, csize, usize, nlen, elen, clen, _disk, _ia, _ea, offset) = struct.unpack(
            "<HHHIIIHHHHHII", cd[pos + 10:pos + 46])
        name = cd[pos + 46:pos + 46 + nlen].decode("utf-8", errors="replace")
        extra = cd[pos + 46 + nlen:pos + 46 + nlen + elen]
        if 0xFFFFFFFF in (csize, usize, offset):
            usize, csize, offset = _zip64_extra(extra, usize, csize, offset)
        out.append(Member(name, method, csize, usize, offset))
        pos += 46 + nlen + elen + clen
    if not out:
        raise NotAZip(f"{url}: empty or unreadable central directory")
    return out


def _zip64_extra(extra: bytes, usize: int, csize: int, offset: int) -> tuple:
    pos = 0
    while pos + 4 <= len(extra):
        tag, size = struct.unpack("<HH", extra[pos:pos + 4])
        body = extra[pos + 4:pos + 4 + size]
        if tag == 1:
            vals = list(struct.unpack(f"<{len(body) // 8}Q", body[:len(body) // 8 * 8]))
            if usize == 0xFFFFFFFF and vals:
                usize = vals.pop(0)
            if csize == 0xFFFFFFFF and vals:
                csize = vals.pop(0)
            if offset == 0xFFFFFFFF and vals:
                offset = vals.pop(0)
            break
        pos += 4 + size
    return usize, csize, offset
