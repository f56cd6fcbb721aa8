"""The subprocess gateway on real processes: deadlines, caps, and no process left behind, whatever happens.

Every command a test starts carries ENVDOCTOR_TEST_MARK=<uuid> in its environment (inherited by its
children and grandchildren), so what is still alive is found with psutil, whatever its parent or session.
No assertion is about a duration: deadlines are generous and process state is what is checked.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path
from typing import Dict, List

import psutil
import pytest

from envdoctor.processes import run_command

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable

# A command that starts one grandchild in its own process group and one in a session of its own (as torch's
# launcher does with its ranks), says so, then sleeps silently or exits as asked.
TREE = textwrap.dedent("""
    import subprocess, sys, time
    sleeper = [sys.executable, "-c", "import time; time.sleep(300)"]
    subprocess.Popen(sleeper)
    subprocess.Popen(sleeper, start_new_session=True)
    print("started", flush=True)
    if sys.argv[1] == "exit":
        sys.exit(0)
    time.sleep(300)
""")


def marked(mark: str) -> List[psutil.Process]:
    found = []
    for p in psutil.process_iter():
        try:
            if p.pid != os.getpid() and p.environ().get("ENVDOCTOR_TEST_MARK") == mark and p.status() != psutil.STATUS_ZOMBIE:
                found.append(p)
        except psutil.Error:
            continue
    return found


def wait_until_none(mark: str, within: float = 60.0) -> List[psutil.Process]:
    """The marked processes still alive after waiting up to `within` seconds for them to go."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        left = marked(mark)
        if not left:
            return []
        time.sleep(0.1)
    return marked(mark)


@pytest.fixture
def mark():
    value = uuid.uuid4().hex
    yield value
    left = marked(value)
    for p in left:  # never leak into the next test, even when this one failed
        try:
            p.kill()
        except psutil.Error:
            pass
    assert not left, f"processes left behind: {[p.cmdline() for p in left]}"


def env_with(mark: str, **extra: str) -> Dict[str, str]:
    return dict(os.environ, ENVDOCTOR_TEST_MARK=mark, **extra)


def tree(tmp_path: Path, mode: str) -> List[str]:
    script = tmp_path / "tree.py"
    script.write_text(TREE)
    return [PY, str(script), mode]


@pytest.mark.slow
def test_a_silent_child_is_killed_at_the_deadline(mark):
    res = run_command([PY, "-c", "import time; time.sleep(300)"], 2, env=env_with(mark))
    assert res.timed_out and res.error == "timed out after 2s" and not res.ok
    assert res.describe() == f"{Path(PY).name}: timed out after 2s"
    assert marked(mark) == []


@pytest.mark.slow
def test_a_child_that_prints_forever_is_killed_and_its_output_capped(mark):
    cap = 64 << 10
    res = run_command([PY, "-c", "while True: print('x' * 100)"], 3, env=env_with(mark), max_bytes=cap)
    assert res.timed_out
    assert 0 < len(res.stdout.encode()) <= cap and res.truncated > 0
    assert set(res.stdout.replace("\n", "")) == {"x"}
    assert marked(mark) == []


@pytest.mark.slow
def test_a_flood_without_line_ends_reaches_the_callback_in_bounded_pieces(mark):
    pieces: List[int] = []
    res = run_command([PY, "-c", "import sys\nwhile True: sys.stdout.write('y' * 4096)"], 3, env=env_with(mark),
                      max_bytes=0, on_line=lambda line: pieces.append(len(line)))
    assert res.timed_out and res.stdout == ""
    assert pieces and max(pieces) <= 64 << 10
    assert marked(mark) == []


@pytest.mark.slow
def test_the_deadline_kills_grandchildren_in_other_groups_and_sessions(tmp_path, mark):
    res = run_command(tree(tmp_path, "sleep"), 20, env=env_with(mark))
    assert res.timed_out and res.stdout == "started\n"
    assert marked(mark) == []


def test_processes_left_behind_by_a_finished_command_are_killed_and_counted(tmp_path, mark):
    res = run_command(tree(tmp_path, "exit"), 60, env=env_with(mark))
    assert res.ok and res.stdout == "started\n"
    assert res.leftovers == 2
    assert marked(mark) == []


@pytest.mark.slow
def test_a_grace_period_lets_the_command_clean_up_on_sigterm(tmp_path, mark):
    done = tmp_path / "cleaned"
    code = ("import signal, sys, time\n"
            f"signal.signal(signal.SIGTERM, lambda *a: (open({str(done)!r}, 'w').close(), sys.exit(0)))\n"
            "print('ready', flush=True)\ntime.sleep(300)")
    res = run_command([PY, "-c", code], 5, env=env_with(mark), grace=30)
    assert res.timed_out and res.stdout == "ready\n"
    assert done.exists()
    assert marked(mark) == []


@pytest.mark.slow
def test_sigkill_follows_when_sigterm_is_ignored_even_in_another_session(mark):
    stubborn = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    code = (stubborn + "import subprocess, sys\n"
            f"subprocess.Popen([sys.executable, '-c', {stubborn + 'time.sleep(300)'!r}], start_new_session=True)\n"
            "print('ready', flush=True)\ntime.sleep(300)")
    res = run_command([PY, "-c", code], 3, env=env_with(mark), grace=1)
    assert res.timed_out and res.stdout == "ready\n"
    assert marked(mark) == []


def test_keyboard_interrupt_kills_the_tree_and_is_reraised(tmp_path, mark):
    def interrupt_when_started(line: str) -> None:
        if line == "started":
            os.kill(os.getpid(), signal.SIGINT)  # a real Ctrl-C: Python raises KeyboardInterrupt in this thread

    with pytest.raises(KeyboardInterrupt):
        run_command(tree(tmp_path, "sleep"), 120, env=env_with(mark), on_line=interrupt_when_started)
    assert marked(mark) == []


def test_an_exception_in_a_callback_kills_the_tree_and_propagates(tmp_path, mark):
    def fail(line: str) -> None:
        raise BrokenPipeError("the terminal went away")

    with pytest.raises(BrokenPipeError):
        run_command(tree(tmp_path, "sleep"), 120, env=env_with(mark), on_line=fail)
    assert marked(mark) == []


# The parent runs the command from a short-lived-style daemon thread, as the probes do: the parent-death
# signal must not depend on that thread, and must reach the grandchildren.
PARENT = textwrap.dedent("""
    import sys, threading, time
    sys.path.insert(0, sys.argv[1])
    from envdoctor.processes import run_command
    threading.Thread(target=run_command, args=(sys.argv[2:], 600), daemon=True).start()
    time.sleep(600)
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG and subreapers are Linux")
def test_sigkill_of_the_parent_kills_the_whole_tree(tmp_path, mark):
    script = tmp_path / "parent.py"
    script.write_text(PARENT)
    parent = subprocess.Popen([PY, str(script), str(ROOT), *tree(tmp_path, "sleep")], env=env_with(mark))
    try:
        end = time.monotonic() + 120
        while time.monotonic() < end and len(marked(mark)) < 5:  # parent, guard, command, two grandchildren
            time.sleep(0.1)
        before = marked(mark)
        assert len(before) == 5, [p.cmdline() for p in before]
        parent.kill()
        parent.wait()
        assert wait_until_none(mark) == []
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


def test_a_missing_program_is_a_result_not_an_exception():
    assert run_command(["/nonexistent/binary"], 5).error == "not found"
    res = run_command(["envdoctor-no-such-program"], 5)
    assert res.error == "not found" and res.returncode is None and res.describe() == "envdoctor-no-such-program: not found"


def test_the_program_is_looked_up_on_the_commands_own_path(tmp_path):
    tool = tmp_path / "mytool"
    tool.write_text("#!/bin/sh\necho from-mytool\n")
    tool.chmod(0o755)
    assert run_command(["mytool"], 30, env={"PATH": str(tmp_path)}).stdout == "from-mytool\n"
    assert run_command(["mytool"], 30, env={"PATH": "/nonexistent"}).error == "not found"


def test_a_program_that_cannot_be_executed_is_an_error(tmp_path):
    tool = tmp_path / "notexec"
    tool.write_text("plain text\n")
    tool.chmod(0o644)
    res = run_command([str(tool)], 30)
    assert res.returncode is None and res.error and "ermission denied" in res.error


def test_no_shell_ever():
    res = run_command(["echo", "$HOME; rm -rf /", "`id`"], 30)
    assert res.stdout == "$HOME; rm -rf / `id`\n"


def test_the_callback_receives_every_line_in_order(mark):
    lines: List[str] = []
    res = run_command([PY, "-c", "for i in range(5000): print(i)"], 120, env=env_with(mark), on_line=lines.append)
    assert res.ok
    assert lines == [str(i) for i in range(5000)]
    assert res.stdout.splitlines() == lines


def test_merged_stderr_keeps_the_order_the_command_wrote(mark):
    code = "import sys\nfor i in range(50):\n    print(i, file=sys.stderr if i % 2 else sys.stdout, flush=True)"
    lines: List[str] = []
    res = run_command([PY, "-c", code], 120, env=env_with(mark), merge_stderr=True, on_line=lines.append)
    assert res.ok and res.stderr == ""
    assert lines == [str(i) for i in range(50)]


def test_output_that_is_not_utf8_is_decoded_with_replacement():
    code = "import sys\nsys.stdout.buffer.write(b'caf\\xe9\\n\\xff\\xfe ok\\n')\nsys.stderr.buffer.write(b'\\x80')"
    lines: List[str] = []
    res = run_command([PY, "-c", code], 60, on_line=lines.append)
    assert res.stdout == "caf\ufffd\n\ufffd\ufffd ok\n"
    assert res.stderr == "\ufffd"
    assert lines[:2] == ["caf\ufffd", "\ufffd\ufffd ok"]


def test_stdin_text_and_an_explicit_environment():
    code = "import os, sys\nprint(sys.stdin.read().upper(), os.environ.get('ONLY_THIS'), 'HOME' in os.environ)"
    res = run_command([PY, "-c", code], 60, env={"ONLY_THIS": "yes"}, input_text="abc")
    assert res.stdout == "ABC yes False\n"


def test_exit_codes_and_signals_are_reported_as_before():
    res = run_command([PY, "-c", "import sys; print('bad thing', file=sys.stderr); sys.exit(3)"], 60)
    assert res.returncode == 3 and res.describe() == f"{Path(PY).name} exited 3: bad thing"
    res = run_command([PY, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"], 60)
    assert res.returncode == -9 and res.killed_by == "SIGKILL"
    assert res.describe() == f"{Path(PY).name} was killed by signal SIGKILL"


@pytest.mark.slow
def test_on_tick_is_called_while_the_command_runs():
    ticks: List[int] = []
    res = run_command([PY, "-c", "import time; time.sleep(2)"], 60, on_tick=lambda: ticks.append(1))
    assert res.ok and ticks


def test_stop_all_ends_the_commands_other_threads_wait_on_with_their_trees(tmp_path, mark):
    """A quitting app's threads wait on commands (the torch probe, a self-test): stop_all ends each one's whole tree
    and the calls return, marked as stopped rather than as the command's own result."""
    import threading

    from envdoctor.processes import STOPPED, stop_all

    results, started = [], threading.Barrier(3)

    def waiter() -> None:
        results.append(run_command(tree(tmp_path, "sleep"), 600, env=env_with(mark),
                                   on_line=lambda line: started.wait(60) if line == "started" else None))

    threads = [threading.Thread(target=waiter) for _ in range(2)]
    for t in threads:
        t.start()
    started.wait(60)  # both commands have started their grandchildren
    assert stop_all() == 2
    for t in threads:
        t.join(120)
    assert [t.is_alive() for t in threads] == [False, False]
    assert [(r.error, r.returncode, r.timed_out, r.stdout) for r in results] == [(STOPPED, None, False, "started\n")] * 2
    assert wait_until_none(mark) == []
    assert stop_all() == 0  # nothing left to stop, and a later command runs as usual
    assert run_command([PY, "-c", "print('after')"], 60, env=env_with(mark)).stdout == "after\n"


def test_stop_all_for_good_also_ends_the_command_a_thread_starts_next(tmp_path, mark):
    """A quitting app's self-test thread goes from probing the interpreter to launching the test (or had just checked
    that the app is not quitting): that next command must not run to its own end either."""
    import threading

    from envdoctor.processes import STOPPED, stop_all

    ran = tmp_path / "ran"
    first_started, results = threading.Event(), []

    def worker() -> None:
        results.append(run_command(tree(tmp_path, "sleep"), 600, env=env_with(mark),
                                   on_line=lambda line: first_started.set() if line == "started" else None))
        results.append(run_command([PY, "-c", f"open({str(ran)!r}, 'w'); import time; time.sleep(600)"], 600,
                                   env=env_with(mark)))

    t = threading.Thread(target=worker)
    t.start()
    assert first_started.wait(60)
    assert stop_all(refuse_new=True) == 1
    t.join(120)
    assert not t.is_alive()
    assert [(r.error, r.returncode) for r in results] == [(STOPPED, None)] * 2
    assert not ran.exists()
    assert wait_until_none(mark) == []
