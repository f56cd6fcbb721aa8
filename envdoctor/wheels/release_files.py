"""The release wheel of an extension built for a torch, from the builds its release workflow published outside the
package index (rules/tables/extension_wheels.json, loaded by envdoctor.rules.tables: flash-attn's GitHub release
files).

A pure function over values: the table's rows, the torch the fix keeps or plans (its release, CUDA, C++ ABI), the
Python and the platform. It answers the file, or why there is none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping, Optional, Sequence, Tuple
from urllib.parse import unquote, urlsplit

from packaging.version import InvalidVersion, Version


@dataclass(frozen=True)
class ReleaseBuilds:
    """One release of an extension and the wheels its release workflow built outside the package index
    (extension_wheels.json): the file for a torch X.Y, CUDA major, Python X.Y, C++ ABI and platform."""

    extension: str
    release: str
    torch: Tuple[str, ...]  # torch X.Y
    cuda: Mapping[str, str]  # torch's CUDA major -> the tag in the file's name ("12" -> "12"; 2.6.3: "12" -> "123")
    python: Tuple[str, ...]  # X.Y
    cxx11_abi: Tuple[bool, ...]
    platforms: Tuple[str, ...]  # wheel platform tags: linux_x86_64
    exclude: Tuple[Mapping[str, str], ...]  # combinations the matrix skipped: {"torch": "2.4", "python": "3.13"}
    glibc: str  # the glibc of the runner that built the files: an older one may not load them
    url: str  # the template: {release} {cuda} {torch} {abi} {py} {platform}
    source: str

    def builds(self, torch: str, cuda_major: str, python: str, abi: bool, platform: str) -> bool:
        """Whether the workflow built a file for these (torch and Python as X.Y)."""
        facts = {"torch": torch, "python": python, "cuda": cuda_major}
        return (torch in self.torch and cuda_major in self.cuda and python in self.python and abi in self.cxx11_abi
                and platform in self.platforms
                and not any(all(facts.get(k) == v for k, v in ex.items()) for ex in self.exclude))

    def file_url(self, torch: str, cuda_major: str, python: str, abi: bool, platform: str) -> str:
        """The URL of the file built for these."""
        return self.url.format(release=self.release, cuda=self.cuda[cuda_major], torch=torch,
                               abi=str(abi).upper(), py=python.replace(".", ""), platform=platform)


@dataclass(frozen=True)
class ReleaseFile:
    """One release wheel: its release and where it is."""

    release: str
    url: str


def file_name(url: str) -> str:
    """The name a download saves the file at `url` under (its last path segment, unquoted)."""
    return unquote(urlsplit(url).path.rsplit("/", 1)[-1])


def name_and_version(url: str) -> Tuple[str, str]:
    """('flash-attn', '2.8.3+cu12torch2.8cxx11abitrue') from a release file's URL; (its file name, '?') when the name
    is no wheel's."""
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    try:
        name, version, _build, _tags = parse_wheel_filename(file_name(url))
    except InvalidWheelFilename:
        return file_name(url), "?"
    return str(name), str(version)


@dataclass(frozen=True)
class TorchBuild:
    """The torch an extension must fit: its release, CUDA version (None: a CPU build) and C++ ABI (None: unknown)."""

    version: str
    cuda: Optional[str]
    cxx11_abi: Optional[bool]
    cuda_unknown: str = ""  # why torch.version.cuda is unknown ('' when it was read: None is then a build without CUDA)
    glibc: Optional[str] = None  # the machine's glibc ('2.35'); None when unknown


def _mm(version: str) -> Optional[str]:
    try:
        release = Version(version).release
    except InvalidVersion:
        return None
    return f"{release[0]}.{release[1]}" if len(release) >= 2 else None


def release_file(rows: Sequence[ReleaseBuilds], extension: str, torch: TorchBuild, python: str,
                 platform: Optional[str], installed: Optional[str] = None,
                 mirror: Optional[str] = None) -> Tuple[Optional[ReleaseFile], str]:
    """(the file, '') of `extension` built for `torch`, `python` ('3.12') and `platform` ('linux_x86_64'), or
    (None, why). The installed release is kept where it has such a file, else the newest release that has one.
    `mirror`: a base URL that replaces the file URL's scheme and host (its path is kept)."""
    mine = [r for r in rows if r.extension == extension]
    if not mine:
        return None, f"no release files of {extension} are known"
    newest = mine[-1].release
    torch_mm = _mm(torch.version)
    if torch_mm is None:
        return None, f"torch {torch.version!r} is no version"
    if not torch.cuda:
        if torch.cuda_unknown:
            return None, f"torch {torch.version}'s CUDA version is unknown ({torch.cuda_unknown})"
        kind = "a ROCm build" if "rocm" in torch.version.partition("+")[2].lower() else "a build without CUDA"
        return None, f"torch {torch.version} is {kind}: {extension}'s release files are CUDA builds"
    try:
        if Version(torch.version).is_prerelease:  # an NGC or nightly torch: X.Y alone does not say its C++ symbols
            return None, f"torch {torch.version} is a prerelease: {extension}'s files are built for released torch"
    except InvalidVersion:
        pass
    cuda_major = torch.cuda.split(".", 1)[0]
    if torch.cxx11_abi is None:
        return None, f"the C++ ABI of torch {torch.version} is unknown: which {extension} file fits it is too"
    if not re.fullmatch(r"\d+\.\d+", python or ""):
        return None, f"{extension}'s release files are for CPython X.Y, not {python or 'an unknown Python'}"
    if platform is None:
        return None, f"{extension}'s release files are for Linux x86_64, not this platform"
    fitting = [r for r in mine if r.builds(torch_mm, cuda_major, python, torch.cxx11_abi, platform)]
    loadable = [r for r in fitting if torch.glibc and _ver(torch.glibc) >= _ver(r.glibc)]
    if fitting and not loadable:
        return None, (f"{extension}'s release files for torch {torch_mm} were built on glibc {fitting[-1].glibc}; this "
                      f"machine's glibc is {torch.glibc or 'unknown'}, and an older one may not load them")
    fitting = loadable
    if not fitting:
        covered = sorted({t for r in mine for t in r.torch}, key=lambda t: tuple(int(p) for p in t.split(".")))
        return None, (f"no {extension} release up to {newest} has a file for torch {torch_mm}, CUDA {cuda_major}, "
                      f"Python {python}, cxx11abi{str(torch.cxx11_abi).upper()}, {platform} (its files cover torch "
                      f"{covered[0]}-{covered[-1]})")
    chosen = next((r for r in fitting if installed and _same(r.release, installed)), fitting[-1])
    url = chosen.file_url(torch_mm, cuda_major, python, torch.cxx11_abi, platform)
    if mirror:
        parts = urlsplit(url)
        url = mirror.rstrip("/") + parts.path
    return ReleaseFile(chosen.release, url), ""


def _ver(text: str) -> Tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text)[:2])


def _same(release: str, installed: str) -> bool:
    """'2.8.3' and '2.8.3+cu12torch2.7cxx11abiTRUE' are one release."""
    try:
        return Version(release).public == Version(installed).public
    except InvalidVersion:
        return False
