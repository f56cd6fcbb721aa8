"""torch.distributed failures that carry no NCCL WARN: what the watchdog, the TCPStore and the launchers say is
read into facts (dist_facts.py), and the findings name the rank, collective, port or host and what to run next."""

from __future__ import annotations

from typing import List

from envdoctor.nccl import diagnose_paths, diagnose_text
from envdoctor.nccl.dist_facts import odd_address
from tests.nccl.helpers import FIXTURES

WATCHDOG = ("[rank{r}]:[E816 01:45:40.183009389 ProcessGroupNCCL.cpp:607] [Rank {r}] Watchdog caught collective "
            "operation timeout: WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn={n}, NumelOut={n}, Timeout(ms)=600000) "
            "ran for 600026 milliseconds before timing out.")
WORK = ("[rank{r}]:[E816 01:45:40.184373931 ProcessGroupNCCL.cpp:1664] [PG {pg} (default_pg) Rank {r}] Exception "
        "(either an error or timeout) detected by watchdog at work: {seq}, last enqueued NCCL work: {seq}, last "
        "completed NCCL work: {done}.")


def hang(*ranks: tuple) -> str:
    """Watchdog and work lines, one pair per (rank, seq, op, numel, pg)."""
    out: List[str] = []
    for r, seq, op, n, pg in ranks:
        out.append(WATCHDOG.format(r=r, seq=seq, op=op, n=n))
        out.append(WORK.format(r=r, seq=seq, pg=pg, done=seq - 1))
    return "\n".join(out)


def evidence(text: str, category: str) -> List[str]:
    for f in diagnose_text(text).findings:
        if f.category == category:
            return f.evidence
    raise AssertionError(f"{category} not among {[f.category for f in diagnose_text(text).findings]}")


# --- facts -----------------------------------------------------------------------------------------


def test_torchrun_failure_block_names_the_root_cause_rank_host_and_signal() -> None:
    d = diagnose_paths([FIXTURES / "rank_oom_killed.log"]).facts.dist
    roots = d.first_failures()
    assert [(e.rank, e.local_rank, e.pid, e.host, e.code, e.signal) for e in roots] == [
        (0, 0, 14750, "gpu-node-07", -9, "SIGKILL")]
    # the summary line and the block's entry are one death; the SIGTERMed workers are kept apart
    assert sorted((e.pid, e.signal) for e in d.exits) == [(14750, "SIGKILL"), (14751, "SIGTERM"), (14752, "SIGTERM")]


def test_launcher_formats_and_kernel_lines_give_the_signal() -> None:
    text = "\n".join([
        "[ERROR] [launch.py:321:sigkill_handler] ['python3', '-u', 'train.py', '--local_rank=3', '--deepspeed', "
        "'ds.json'] exits with return code = -9",
        "torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with signal SIGABRT",
        "subprocess.CalledProcessError: Command '['python', '-u', 'train.py', '--local_rank=7']' died with "
        "<Signals.SIGSEGV: 11>.",
        "[Tue Dec  1 00:01:02 2026] Out of memory: Killed process 4242 (pt_main_thread) total-vm:98765432kB",
        "command terminated with exit code 135",
    ])
    exits = diagnose_text(text).facts.dist.exits
    got = [(e.launcher, e.local_rank, e.signal, e.code) for e in exits]
    assert got == [("deepspeed", 3, "SIGKILL", -9), ("mp.spawn", 1, "SIGABRT", -6), ("launch", 7, "SIGSEGV", -11),
                   ("kernel", None, "SIGKILL", -9), ("shell", None, "SIGBUS", -7)]
    assert exits[3].pid == 4242 and exits[3].process == "pt_main_thread"


def test_a_python_exception_exit_is_not_a_signal_death() -> None:
    d = diagnose_paths([FIXTURES / "gpu_oom.log"]).facts.dist
    assert [(e.rank, e.code, e.signal) for e in d.first_failures()] == [(1, 1, None)]
    cats = [f.category for f in diagnose_paths([FIXTURES / "gpu_oom.log"]).findings]
    assert cats[0] == "gpu_oom" and not {"rank_oom_killed", "rank_segfault", "rank_aborted"} & set(cats)


def test_watchdog_lines_give_rank_seq_op_size_timeout_and_process_group() -> None:
    d = diagnose_text(hang((3, 4411, "ALLREDUCE", 1, "0"))).facts.dist
    (t,) = d.timeouts
    assert (t.rank, t.seq, t.op, t.numel_in, t.timeout_ms, t.ran_ms, t.pg, t.last_completed) == (
        3, 4411, "ALLREDUCE", 1, 600000, 600026, "0", 4410)


def test_old_and_new_watchdog_formats() -> None:
    old = ("[E ProcessGroupNCCL.cpp:587] [Rank 2] Watchdog caught collective operation timeout: "
           "WorkNCCL(OpType=BROADCAST, Timeout(ms)=1800000) ran for 1802157 milliseconds before timing out.")
    new = ("[rank1]:[E909 08:45:30.126335825 ProcessGroupNCCL.cpp:2252] [PG ID 2 PG GUID 3 Rank 1]  failure "
           "detected by watchdog at work sequence id: 40231 PG status: last enqueued work: 40267, last completed "
           "work: 40230")
    d = diagnose_text(old + "\n" + new).facts.dist
    assert [(t.rank, t.op, t.seq, t.timeout_ms, t.pg, t.last_completed) for t in d.timeouts] == [
        (2, "BROADCAST", None, 1800000, None, None), (1, None, 40231, None, "2", 40230)]


def test_rendezvous_facts_ports_endpoints_and_names() -> None:
    text = "\n".join([
        "[W socket.cpp:401] [c10d] The server socket has failed to bind to [::]:29400 (errno: 98 - Address already "
        "in use).",
        "[W socket.cpp:401] [c10d] The server socket has failed to bind to 0.0.0.0:29400 (errno: 98 - Address "
        "already in use).",
        "[W socket.cpp:436] [c10d] The server socket has failed to bind to [DESKTOP-L9L2GVM]:10086 (system error: "
        "10048 - Only one usage of each socket address is normally permitted.).",
        "[W socket.cpp:558] [c10d] The server socket has failed to bind to [node1]:29501 (errno: 99 - Cannot assign "
        "requested address).",
        "[W socket.cpp:663] [c10d] The client socket has failed to connect to [::ffff:255.255.0.0]:29500 (errno: "
        "110 - Connection timed out).",
        "[E socket.cpp:957] [c10d] The client socket has timed out after 900s while trying to connect to "
        "(33.145.124.128, 29500).",
        "[W socket.cpp:601] [c10d] The IPv6 network addresses of (i-7840df31, 37340) cannot be retrieved (gai "
        "error: -2 - Name or service not known).",
    ])
    d = diagnose_text(text).facts.dist
    assert d.ports_in_use == {29400: ["[::]", "0.0.0.0"], 10086: ["[DESKTOP-L9L2GVM]"]}
    assert d.bind_errors == {29501: "99"}  # cannot assign: a wrong address, not a taken port
    assert [(e.host, e.port, e.why) for e in d.endpoints] == [
        ("255.255.0.0", 29500, "errno 110 - Connection timed out"), ("33.145.124.128", 29500, "timed out after 900s")]
    assert d.unresolved == {"i-7840df31": "gai error -2 - Name or service not known"}
    assert diagnose_text(text).to_json()["facts"]["distributed"]["ports_in_use"] == [10086, 29400]


def test_odd_addresses() -> None:
    assert odd_address("255.255.0.0") and odd_address("0.0.0.5") and odd_address("0.0.0.0")
    assert odd_address("10.0.0.5") is None and odd_address("node-1") is None and odd_address("fe80::1") is None


# --- what the findings say ---------------------------------------------------------------------------


def test_sigkill_finding_names_rank_host_and_dmesg() -> None:
    ev = evidence((FIXTURES / "rank_oom_killed.log").read_text(), "rank_oom_killed")
    assert any("rank 0 pid 14750 on gpu-node-07 died of SIGKILL (exit -9)" in e for e in ev)
    assert any("2 other worker(s) got SIGTERM" in e for e in ev)
    assert any("dmesg -T | grep -i -E 'killed process|out of memory'` on gpu-node-07" in e for e in ev)


def test_segfault_and_abort_findings_say_what_to_run() -> None:
    seg = evidence((FIXTURES / "rank_segfault.log").read_text(), "rank_segfault")
    assert any("rank 0 pid 3304209 on b200-node-232 died of SIGSEGV (exit -11)" in e for e in seg)
    assert any("PYTHONFAULTHANDLER=1" in e for e in seg)
    abort = evidence((FIXTURES / "rank_aborted.log").read_text(), "rank_aborted")
    assert any("TORCH_SHOW_CPP_STACKTRACES=1" in e for e in abort)


def test_port_finding_names_the_port_and_how_to_find_its_holder() -> None:
    text = ("torch.distributed.DistNetworkError: The server socket has failed to listen on any local network "
            "address. The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use). "
            "The server socket has failed to bind to 0.0.0.0:29500 (errno: 98 - Address already in use).")
    ev = evidence(text, "port_in_use")
    assert any(e.startswith("port 29500 is already in use") for e in ev)
    assert any("ss -ltnp 'sport = :29500'" in e for e in ev)


def test_a_netmask_as_master_addr_is_a_bad_address_not_a_firewall() -> None:
    text = ("[W socket.cpp:663] [c10d] The client socket has failed to connect to [::ffff:255.255.0.0]:29500 "
            "(errno: 110 - Connection timed out).")
    report = diagnose_text(text)
    assert report.findings[0].category == "rendezvous_bad_master_addr"
    ev = report.findings[0].evidence
    assert any("255.255.0.0 is a netmask or broadcast address" in e for e in ev)
    assert any("nc -zv 255.255.0.0 29500" in e for e in ev)
    scores = {f.category: f.score for f in report.findings}
    plain = {f.category: f.score for f in diagnose_text(text.replace("255.255.0.0", "10.1.2.3")).findings}
    assert scores["rendezvous_bad_master_addr"] > plain["rendezvous_bad_master_addr"]


def test_unresolved_host_is_named_with_getent() -> None:
    text = ("[W socket.cpp:601] [c10d] The IPv6 network addresses of (user, 53821) cannot be retrieved (gai error: "
            "-3 - Temporary failure in name resolution).")
    ev = evidence(text, "hostname_unresolvable")
    assert any("`user` does not resolve (gai error -3" in e for e in ev) and any("getent hosts user" in e for e in ev)


def test_watchdog_evidence_names_ranks_seq_op_and_the_silent_ranks() -> None:
    comm = "node0:2210:2300 [0] NCCL INFO comm 0x55d3 rank 0 nRanks 4 nNodes 1 localRanks 4 localRank 0 MNNVL 0"
    text = comm + "\n" + hang((0, 4411, "ALLREDUCE", 1, "0"), (1, 4411, "ALLREDUCE", 1, "0"), (2, 4411, "ALLREDUCE", 1, "0"))
    ev = evidence(text, "timeout_slow_rank")
    assert any(e.startswith("watchdog: ranks 0-2 timed out in ALLREDUCE at SeqNum 4411 (PG 0, 1 element)") for e in ev)
    assert any("barrier" in e for e in ev)
    assert any(e.startswith("no timeout from rank 3 of 4") for e in ev)
    assert any("TORCH_NCCL_TRACE_BUFFER_SIZE" in e for e in ev)


def test_different_collectives_at_one_seqnum_are_a_mismatch_only_within_a_process_group() -> None:
    desync = hang((7, 80078, "BROADCAST", 5056, "0"), (3, 80078, "ALLREDUCE", 2106881, "0"))
    report = diagnose_text(desync)
    assert report.findings[0].category == "collective_mismatch"
    assert any("rank 3 in ALLREDUCE (2106881 elements) but rank 7 in BROADCAST (5056 elements)" in e
               for e in report.findings[0].evidence)
    two_groups = hang((7, 80078, "BROADCAST", 5056, "1"), (3, 80078, "ALLREDUCE", 2106881, "0"))
    assert diagnose_text(two_groups).findings[0].category != "collective_mismatch"


def test_a_rank_at_an_earlier_seqnum_is_named_as_behind() -> None:
    text = hang((0, 1580, "ALLREDUCE", 466119168, "1"), (1, 1580, "ALLREDUCE", 466119168, "1"),
                (2, 1579, "ALLREDUCE", 466119168, "1"))
    ev = evidence(text, "timeout_slow_rank")
    assert any("rank 2 timed out at SeqNum 1579, ranks 0,1 at 1580 (PG 1): rank 2 fell behind first" in e for e in ev)


# --- ranking ------------------------------------------------------------------------------------------


def test_sigabrt_after_a_watchdog_timeout_is_the_teardown_not_a_crash() -> None:
    cats = [f.category for f in diagnose_paths([FIXTURES / "timeout_slow_rank__sigabrt_teardown.log"]).findings]
    assert cats[0] == "timeout_slow_rank" and "rank_aborted" not in cats[:2]


def test_a_sigkilled_rank_behind_timeouts_is_the_crash_and_says_so() -> None:
    text = hang((0, 4411, "ALLREDUCE", 1, "0"), (1, 4411, "ALLREDUCE", 1, "0")) + "\n" + \
        (FIXTURES / "rank_oom_killed.log").read_text()
    report = diagnose_text(text)
    cats = [f.category for f in report.findings]
    assert cats[0] == "timeout_rank_crashed" and "rank_oom_killed" in cats[:3]
    assert any("died of SIGKILL" in e for e in report.findings[0].evidence)


def test_launcher_chatter_alone_is_no_finding() -> None:
    text = ("W0521 15:43:02.684000 14702 torch/distributed/elastic/multiprocessing/api.py:897] Sending process 14751 "
            "closing signal SIGTERM\n  exitcode  : 0 (pid: 14751)\nexit status 1")
    assert diagnose_text(text).findings == []


def test_cuda_oom_and_a_lost_store_are_named() -> None:
    text = ("[rank2]:[W729 10:15:17.529377834 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=76, "
            "addr=[localhost]:60902, remote=[localhost]:29500): Connection reset by peer\n"
            "RuntimeError: CUDA out of memory. Tried to allocate 21.06 GiB (GPU 0; 79.35 GiB total capacity; 63.19 GiB "
            "already allocated; 8.57 GiB free; 68.48 GiB reserved in total by PyTorch)")
    report = diagnose_text(text)
    assert report.findings[0].category == "timeout_rank_crashed"
    ev = report.findings[0].evidence
    assert any("a rank (GPU 0) ran out of GPU memory: tried to allocate 21.06 GiB with 8.57 GiB free of 79.35 GiB" in e
               for e in ev)
    assert any(e.startswith("TCPStore at localhost:29500 went away (Connection reset by peer)") for e in ev)
    oom = evidence((FIXTURES / "gpu_oom.log").read_text(), "gpu_oom")
    assert any("rank 1 (GPU 1) ran out of GPU memory: tried to allocate 1.96 GiB with 1.11 GiB free of 79.25 GiB" in e
               for e in oom)


def test_rendezvous_that_few_joined_and_a_refused_port_say_what_they_mean() -> None:
    text = ("torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 1/2 clients joined.\n"
            "[W socket.cpp:663] [c10d] The client socket has failed to connect to [node0]:29500 (errno: 111 - "
            "Connection refused).")
    ev = evidence(text, "rendezvous_bad_master_addr")
    assert any("only 1 of 2 clients joined the rendezvous in 901 s" in e for e in ev)
    assert any("node0:29500 (errno 111 - Connection refused): nothing listens there" in e for e in ev)
