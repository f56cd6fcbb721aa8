"""`nvidia-smi` (the table) and `nvidia-smi -q` (its key lines).

    | NVIDIA-SMI 550.54.15   Driver Version: 550.54.15   CUDA Version: 12.4 |   driver.version, cuda_driver_version
    |   0  NVIDIA A100-SXM4-80GB   On | 00000000:07:00.0 Off |   0 |          gpus[0].name, persistence_mode,
                                                                              pci_bus_id, ecc_uncorrected
    | N/A 34C P0 61W / 400W |   0MiB / 81920MiB | 0% Default |             gpus[0].memory_bytes
    |                       |                   |    Disabled |             gpus[0].mig_enabled (the MIG M. column)
    NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver    absent driver

The table lists every GPU the driver sees, so the GPU list it states is the whole list. `-q` gives the same facts
under "Driver Version", "CUDA Version", "GPU <bus id>", "Product Name", "Persistence Mode", "MIG Mode / Current",
"FB Memory Usage / Total". A GPU's compute capability is not in either: see envdoctor/text/gpu_names.py.
"""

from __future__ import annotations

import re
from typing import Optional

from envdoctor.text.facts import Section, Statements, not_read
from envdoctor.text.lines import SectionReader

TABLE, QUERY = "nvidia_smi", "nvidia_smi_q"
MIB = 1024 * 1024
CUT_WHY = "the pasted nvidia-smi table is cut short: more GPUs may follow"
_HEADER = re.compile(r"NVIDIA-SMI\s+(\S+)\s+Driver Version:\s*(\S+)(?:\s+CUDA Version:\s*(\S+))?")
_FAILED = re.compile(r"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver")
_BUS = r"[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]"
_ROW1 = re.compile(rf"^\|\s+(\d{{1,4}})\s+(.+?)\s+(On|Off|WDDM|TCC)\s*\|\s*({_BUS})\s+(On|Off)\s*\|\s*(\S+)\s*\|")
_ROW2 = re.compile(r"(\d{1,9})\s*MiB\s*/\s*(\d{1,9})\s*MiB")
_ROW3 = re.compile(r"^\|\s+\|\s+\|\s+(Enabled|Disabled|N/A)\s+\|\s*$")
_Q_OPENS = re.compile(r"^=+\s*NVSMI LOG\s*=+\s*$")
_Q_KEY = re.compile(r"^(\s*)([A-Za-z][\w .()/-]*?)\s*:\s*(.*?)\s*$")
_Q_GPU = re.compile(rf"^GPU ({_BUS})\s*$")


def opens_table(line: str) -> bool:
    return bool(_HEADER.search(line) or _FAILED.search(line))


def opens_query(line: str) -> bool:
    return bool(_Q_OPENS.match(line.strip()))


class SmiTable(SectionReader):
    kind = TABLE

    def __init__(self, facts: Statements, start: int) -> None:
        super().__init__(facts, start)
        self.gpu: Optional[int] = None
        self.row = 0
        self.blanks = 0
        self.failed = False
        self.rows_seen = False
        self.closed = False  # the GPU table ended (a blank line, the Processes or MIG devices table)
        self.last = ""

    def feed(self, line: str, no: int) -> bool:
        text = line.strip()
        if no == self.start:
            self._header(line, no)
            return True
        if self.failed:
            return False
        if not text:
            self.blanks += 1
            self.closed = self.closed or self.rows_seen
            return self.blanks <= 1
        self.blanks = 0
        if text[:1] not in "|+":
            return False
        self.end = no
        self.last = text
        if self.rows_seen and ("Processes:" in text or "MIG devices:" in text):
            self.closed = True
        m = _ROW1.match(text)
        if m:
            self._gpu(m, line, no)
        elif self.gpu is not None:
            self.row += 1
            self._more(text, line, no)
        return True

    def _header(self, line: str, no: int) -> None:
        f = self.facts
        if _FAILED.search(line):
            f.absent("driver", "nvidia-smi could not communicate with the NVIDIA driver", line, no)
            f.state("driver", None, line, no)
            self.failed = True
            return
        m = _HEADER.search(line)
        f.state("driver.version", m.group(2), line, no)
        f.state("driver.source", "nvidia-smi", line, no)
        if m.group(3) and not not_read(m.group(3)):
            f.state("driver.cuda_driver_version", m.group(3), line, no)

    def _gpu(self, m: re.Match[str], line: str, no: int) -> None:
        f = self.facts
        index = self.gpu = int(m.group(1))
        self.row = 1
        self.rows_seen = True
        f.state(f"gpus.{index}.name", m.group(2).strip(), line, no)
        if m.group(3) in ("On", "Off"):
            f.state(f"gpus.{index}.persistence_mode", m.group(3) == "On", line, no)
        f.state(f"gpus.{index}.pci_bus_id", m.group(4), line, no)
        if m.group(6).isdigit() and len(m.group(6)) <= 9:
            f.state(f"gpus.{index}.ecc_uncorrected", int(m.group(6)), line, no)

    def _more(self, text: str, line: str, no: int) -> None:
        f = self.facts
        if self.row == 2:
            mem = _ROW2.search(text)
            if mem:
                f.state(f"gpus.{self.gpu}.memory_bytes", int(mem.group(2)) * MIB, line, no)
        elif self.row == 3:
            mig = _ROW3.match(text)
            if mig and mig.group(1) != "N/A":
                f.state(f"gpus.{self.gpu}.mig_enabled", mig.group(1) == "Enabled", line, no)
            self.gpu = None


    def close(self) -> Optional[Section]:
        if self.rows_seen and not self.closed and not self.last.startswith("+"):
            self.facts.partial("gpus", CUT_WHY)  # cut inside the GPU table: more GPUs may follow
        return super().close()


class SmiQuery(SectionReader):
    kind = QUERY

    def __init__(self, facts: Statements, start: int) -> None:
        super().__init__(facts, start)
        self.gpus = -1
        self.parent = ""

    def feed(self, line: str, no: int) -> bool:
        if no == self.start or not line.strip():
            return True
        gpu = _Q_GPU.match(line.strip()) if not line[:1].isspace() else None
        if gpu:
            self.gpus += 1
            self.facts.state(f"gpus.{self.gpus}.pci_bus_id", gpu.group(1), line, no)
            self.end = no
            return True
        m = _Q_KEY.match(line)
        if not m:
            if line[:1].isspace():  # a group heading ("    MIG Mode", "    FB Memory Usage")
                self.parent = line.strip().lower()
                self.end = no
                return True
            return False
        indent, key, value = m.groups()
        if not indent and self.gpus >= 0 and key not in ("Driver Version", "CUDA Version", "Attached GPUs", "Timestamp"):
            return False
        self.end = no
        self._key(len(indent), key.lower(), value, line, no)
        return True

    def _key(self, indent: int, key: str, value: str, line: str, no: int) -> None:
        f = self.facts
        if not value or not_read(value):
            return
        if indent == 0:
            if key == "driver version":
                f.state("driver.version", value, line, no)
                f.state("driver.source", "nvidia-smi", line, no)
            elif key == "cuda version":
                f.state("driver.cuda_driver_version", value, line, no)
            return
        if self.gpus < 0:
            return
        g = f"gpus.{self.gpus}"
        if key == "product name":
            f.state(f"{g}.name", value, line, no)
        elif key == "gpu uuid":
            f.state(f"{g}.uuid", value, line, no)
        elif key == "persistence mode" and value in ("Enabled", "Disabled"):
            f.state(f"{g}.persistence_mode", value == "Enabled", line, no)
        elif key == "current" and self.parent == "mig mode" and value in ("Enabled", "Disabled"):
            f.state(f"{g}.mig_enabled", value == "Enabled", line, no)
        elif key == "total" and self.parent == "fb memory usage":
            mib = re.match(r"(\d{1,9})\s*MiB", value)
            if mib:
                f.state(f"{g}.memory_bytes", int(mib.group(1)) * MIB, line, no)

    def close(self) -> Optional[Section]:
        return super().close() if self.end > self.start else None
