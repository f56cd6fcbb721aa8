"""envdoctor's settings: every ENVDOCTOR_* variable and the cache folder, resolved once, at the edges.

The CLI and the TUI build one `Settings.from_env(os.environ)` and hand plain values (paths, URLs,
timeouts, a loaded wheel index) to the core; nothing below them reads the environment. A bad value
is an InputError that names the variable (exit 2).

    ENVDOCTOR_WHEELS_INDEX   a wheel index file to use instead of the user copy or the bundled one
    ENVDOCTOR_RULES_DIR      another rules database (rule authors, tests)
    ENVDOCTOR_TORCH_TIMEOUT  seconds the torch probe may take (default 90)
    ENVDOCTOR_TORCH_INDEX    the PyTorch wheel index or mirror (what --index-base overrides)
    ENVDOCTOR_RELEASE_MIRROR a mirror of the hosts of release wheels outside the index (flash-attn's GitHub
                             releases): its URL replaces the files' scheme and host, their path is kept
    ENVDOCTOR_INSTALLER      `pip` to never use uv; `uv` or `auto` (default) to use uv when it is on PATH
    ENVDOCTOR_SELFTEST_DIR   where self-test run directories go (default: the system temp directory)
    PIP_INDEX_URL            the package index `index update` reads DeepSpeed releases from
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Optional

from envdoctor.errors import InputError
from envdoctor.install.indexes import TORCH_INDEX_ENV

DEFAULT_TORCH_TIMEOUT = 90.0
RELEASE_MIRROR_ENV = "ENVDOCTOR_RELEASE_MIRROR"
INSTALLERS = ("auto", "uv", "pip")


@dataclass(frozen=True)
class Settings:
    cache_dir: Path
    wheels_index: Optional[Path] = None
    rules_dir: Optional[Path] = None
    torch_timeout: float = DEFAULT_TORCH_TIMEOUT
    torch_index: Optional[str] = None
    installer: str = "auto"
    selftest_dir: Optional[Path] = None
    pip_index_url: Optional[str] = None
    release_mirror: Optional[str] = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str], platform: str = sys.platform) -> Settings:
        def path(name: str) -> Optional[Path]:
            value = environ.get(name)
            return Path(value) if value else None

        installer = (environ.get("ENVDOCTOR_INSTALLER") or "auto").strip().lower()
        if installer not in INSTALLERS:
            raise InputError(f"ENVDOCTOR_INSTALLER={environ['ENVDOCTOR_INSTALLER']!r}: expected one of "
                             f"{', '.join(INSTALLERS)}")
        return cls(
            cache_dir=user_cache_dir(environ, platform),
            wheels_index=path("ENVDOCTOR_WHEELS_INDEX"),
            rules_dir=path("ENVDOCTOR_RULES_DIR"),
            torch_timeout=_seconds(environ, "ENVDOCTOR_TORCH_TIMEOUT", DEFAULT_TORCH_TIMEOUT),
            torch_index=environ.get(TORCH_INDEX_ENV) or None,
            installer=installer,
            selftest_dir=path("ENVDOCTOR_SELFTEST_DIR"),
            pip_index_url=environ.get("PIP_INDEX_URL") or None,
            release_mirror=_release_mirror(environ),
        )

    @property
    def state_root(self) -> Path:
        """Per-environment install state (the last fix and the files it replaced) lives under here."""
        return self.cache_dir / "state"

    def writable_state_root(self) -> Path:
        """`state_root`, created if missing, checked to be a directory envdoctor can write in (before a fix
        touches anything); else an InputError naming it."""
        return writable_dir(self.state_root)

    @property
    def user_index_path(self) -> Path:
        """Where `envdoctor index update` writes its refreshed copy of the wheel index."""
        return self.cache_dir / "wheels_index.json"

    @property
    def use_uv(self) -> bool:
        return self.installer != "pip"

    def wheel_index(self, warn: Optional[Callable[[str], None]] = None) -> Any:
        """The wheel index to use: ENVDOCTOR_WHEELS_INDEX (invalid -> InputError), else the user copy while it is
        valid and built from the bundled copy, else the bundled copy. `warn(msg)` hears about a skipped user copy."""
        from envdoctor.wheels.index import bundled_path, load_index

        cache = self.validation_cache()
        if self.wheels_index is not None:
            return load_index(self.wheels_index, cache)
        bundled = load_index(bundled_path(), cache)
        user = self.user_index_path
        if not user.is_file():
            return bundled
        try:
            idx = load_index(user, cache)
        except InputError as exc:
            if warn:
                warn(f"ignoring the user copy of the wheel index: {exc}")
            return bundled
        if idx.raw.get("based_on") == bundled.generated:
            return idx
        if warn:
            warn(f"ignoring {user}: built from an older bundled index; run `envdoctor index update`")
        return bundled

    def validation_cache(self) -> Any:
        """What earlier runs found valid (envdoctor.validation_cache.ValidationCache), kept in the cache folder."""
        from envdoctor.validation_cache import ValidationCache

        return ValidationCache(self.cache_dir / "validated")

    @property
    def rules_path(self) -> Path:
        """The rules database: ENVDOCTOR_RULES_DIR (rule authors, tests), else the bundled one."""
        from envdoctor.data_files import data_path

        if self.rules_dir is None:
            return data_path("rules")
        try:
            is_dir = self.rules_dir.is_dir()
        except OSError as exc:  # a name too long, a loop of links
            raise InputError(f"ENVDOCTOR_RULES_DIR: cannot use it: {exc.strerror or exc}") from None
        except ValueError:  # a NUL in it
            raise InputError("ENVDOCTOR_RULES_DIR: a path with a NUL character in it names no directory") from None
        if not is_dir:
            raise InputError(f"ENVDOCTOR_RULES_DIR={str(self.rules_dir)[:200]!r}: not a directory")
        return self.rules_dir

    def knowledge(self, warn: Optional[Callable[[str], None]] = None) -> Any:
        """Everything diagnosis is given (envdoctor.knowledge.Knowledge): the rules database and the wheel index."""
        from envdoctor.knowledge import knowledge_from

        return knowledge_from(self.rules_path, self.wheel_index(warn), self.validation_cache())

    def rules_knowledge(self) -> Any:
        """The Knowledge for commands that plan nothing (self-tests, fleet): the rules database with the bundled
        wheel index, so a bad ENVDOCTOR_WHEELS_INDEX or user copy, which they never read, does not stop them."""
        from envdoctor.knowledge import knowledge_from
        from envdoctor.wheels.index import bundled_path, load_index

        return knowledge_from(self.rules_path, load_index(bundled_path(), self.validation_cache()), self.validation_cache())

    def nccl_rules(self, folder: Optional[str] = None) -> Any:
        """The NCCL root-cause signatures `nccl diagnose` and the TUI use: those in `folder` (`--rules DIR`), else
        ENVDOCTOR_RULES_DIR's `nccl/`, else the bundled ones."""
        if folder:
            from envdoctor.nccl import load_rules

            return load_rules(folder)
        from envdoctor.knowledge import nccl_rules_for

        return nccl_rules_for(self.rules_path)

    def torch_index_base(self, option: Optional[str], default: str) -> str:
        """The PyTorch wheel index to plan and install from: --index-base, else ENVDOCTOR_TORCH_INDEX, else the
        wheel index's own default; each checked, the error naming where the bad URL came from."""
        from envdoctor.usecases.plan_fix import torch_index_base

        return torch_index_base(option, self.torch_index, default)

    def fix_setup(self, warn: Optional[Callable[[str], None]] = None) -> Any:
        """What planning and applying a fix take from the settings (envdoctor.usecases.plan_fix.FixSetup); the
        wheel index is loaded when the plan is made, `warn` hearing about a skipped user copy."""
        from envdoctor.usecases.plan_fix import FixSetup

        return FixSetup(wheel_index=lambda: self.wheel_index(warn), state_root=self.state_root,
                        writable_state_root=self.writable_state_root, use_uv=self.use_uv, torch_index=self.torch_index,
                        knowledge=lambda: self.knowledge(warn), probe=self.probe, release_mirror=self.release_mirror)

    def probe(self, python: str) -> Any:
        """A fresh snapshot of the environment at `python` (what `check --python` probes)."""
        from envdoctor.probes.context import probe_context
        from envdoctor.probes.runner import run_probes

        return run_probes(probe_context(python, None, self.torch_timeout, self.state_root))


def user_cache_dir(environ: Mapping[str, str], platform: str = sys.platform) -> Path:
    home = Path(environ["HOME"]) if environ.get("HOME") else Path.home()
    if platform.startswith("win"):
        return Path(environ.get("LOCALAPPDATA") or home / "AppData" / "Local") / "envdoctor" / "Cache"
    if platform == "darwin":
        return home / "Library" / "Caches" / "envdoctor"
    xdg = environ.get("XDG_CACHE_HOME")
    # The XDG base directory spec: a relative path is invalid and is ignored (it would follow the current directory).
    return (Path(xdg) if xdg and os.path.isabs(xdg) else home / ".cache") / "envdoctor"


def writable_dir(path: Path) -> Path:
    """`path` as a directory that takes a file (created if missing); a file in its place, no permission or a
    full disk is an InputError naming it."""
    import tempfile

    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path) as fh:
            fh.write(b"envdoctor")
            fh.flush()
    except OSError as exc:
        raise InputError(f"{path}: envdoctor's state directory cannot be written ({exc.strerror}); "
                         "free it, or point XDG_CACHE_HOME elsewhere. Nothing was changed") from None
    return path


def _release_mirror(environ: Mapping[str, str]) -> Optional[str]:
    """ENVDOCTOR_RELEASE_MIRROR checked as an index URL is (http or https, a host); None when unset."""
    value = environ.get(RELEASE_MIRROR_ENV)
    if not value:
        return None
    from urllib.parse import urlsplit

    from envdoctor.install.resolve import check_index_url

    url = check_index_url(value, RELEASE_MIRROR_ENV)
    parts = urlsplit(url)
    if parts.username or parts.password or parts.query or parts.fragment:
        raise InputError(f"{RELEASE_MIRROR_ENV}: a base URL without credentials, query or fragment (the files' paths "
                         "go under it; pip reads a mirror's credentials from ~/.netrc, never from a command line)")
    return url


def _seconds(environ: Mapping[str, str], name: str, default: float) -> float:
    text = environ.get(name)
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"{name}={text!r}: not a number of seconds") from None
    if not 0 < value < float("inf"):
        raise InputError(f"{name}={text!r}: must be a positive number of seconds")
    return value
