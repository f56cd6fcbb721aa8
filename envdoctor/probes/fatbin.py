"""Which GPU architectures a shared library carries kernels for, read from its ELF `.nv_fatbin`.

No cuobjdump needed: we read the ELF section table, then walk the fatbin container headers inside
the section and note each entry's kind (SASS cubin or PTX) and target. Only headers are read.
"""

from __future__ import annotations

import struct
from typing import BinaryIO, List, Optional, Set, Tuple

FATBIN_MAGIC = 0xBA55ED50
KIND_PTX = 1
KIND_SASS = 2


def _section(fh: BinaryIO, name: bytes) -> Optional[Tuple[int, int]]:
    ident = fh.read(16)
    if len(ident) < 16 or ident[:4] != b"\x7fELF" or ident[4] != 2:  # 64-bit ELF only
        return None
    endian = "<" if ident[5] == 1 else ">"
    header = fh.read(48)
    if len(header) < 48:
        return None
    (_, _, _, _, _, shoff, _, _, _, _, shentsize, shnum, shstrndx) = struct.unpack(endian + "HHIQQQIHHHHHH", header)
    if not shoff or shentsize < 64 or shnum == 0 or shstrndx >= shnum:
        return None
    fh.seek(shoff)
    table = fh.read(shentsize * shnum)
    if len(table) < shentsize * shnum:
        return None

    def entry(i: int) -> Tuple[int, int, int]:
        raw = table[i * shentsize:i * shentsize + 64]
        sh_name, _, _, _, sh_offset, sh_size = struct.unpack(endian + "IIQQQQ", raw[:40])
        return sh_name, sh_offset, sh_size

    _, str_off, str_size = entry(shstrndx)
    fh.seek(str_off)
    strtab = fh.read(min(str_size, 1 << 20))
    for i in range(shnum):
        sh_name, off, size = entry(i)
        end = strtab.find(b"\0", sh_name)
        if strtab[sh_name:end] == name:
            return off, size
    return None


def archs_in_file(path: str) -> List[str]:
    """'sm_80', 'compute_90' ... found in the file's fatbins; [] when it has none."""
    found: Set[str] = set()
    with open(path, "rb") as fh:
        sec = _section(fh, b".nv_fatbin")
        if sec is None:
            return []
        start, size = sec
        pos = start
        end = start + size
        while pos + 16 <= end:
            fh.seek(pos)
            magic, _version, header_size, fat_size = struct.unpack("<IHHQ", fh.read(16))
            if magic != FATBIN_MAGIC:
                pos += 8  # fatbins are 8-byte aligned; skip padding between them
                continue
            entry = pos + header_size
            stop = min(entry + fat_size, end)
            while entry + 64 <= stop:
                fh.seek(entry)
                raw = fh.read(64)
                kind, _ver, e_header, padded = struct.unpack("<HHII", raw[:12])
                sm = struct.unpack("<I", raw[28:32])[0]
                if e_header < 16 or (kind not in (KIND_PTX, KIND_SASS)):
                    break
                if 10 <= sm <= 2000:
                    found.add(("compute_%d" if kind == KIND_PTX else "sm_%d") % sm)
                entry += e_header + padded
            pos = max(stop, pos + 16)
    return sorted(found, key=_arch_key)


def _arch_key(arch: str) -> Tuple[int, str]:
    kind, _, num = arch.partition("_")
    digits = "".join(ch for ch in num if ch.isdigit())
    return (int(digits) if digits else 0, kind)
