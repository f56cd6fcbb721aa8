"""Shared bits of the NCCL diagnosis tests."""

from __future__ import annotations

from pathlib import Path

from envdoctor.snapshot import FabricManager, Host, Interface, Network, PythonEnv, Snapshot

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "nccl"
MiB = 1 << 20
GiB = 1 << 30


def snapshot(**host) -> Snapshot:
    """A machine snapshot with only the fields a test sets (everything else 'not probed')."""
    return Snapshot(created="2026-01-01T00:00:00Z", host=Host(os="linux", arch="x86_64", **host),
                    python=PythonEnv(version="3.11.7"))


def with_interfaces(snap: Snapshot, *names: str) -> Snapshot:
    snap.network = Network(interfaces=[Interface(name=n) for n in names], rdma_devices=[])
    return snap


def with_fabric_manager(snap: Snapshot, running: bool) -> Snapshot:
    snap.fabric_manager = FabricManager(nvswitch_present=True, running=running)
    return snap
