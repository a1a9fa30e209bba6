"""SIGTERM / SIGINT handling of the worker's main thread (django_pgmq/worker/signals.py).

Each case runs in a fresh interpreter: signal handlers belong to the main thread
of a process, and a handler that deadlocks must not hang the test run.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRELUDE = """
import os, signal, threading
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "example_project.settings")
import django
django.setup()
from django_pgmq.worker import signals
"""


def run(body: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", PRELUDE + body],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_signal_while_the_main_thread_holds_its_stop_events_lock_is_recorded():
    """The worker's main loop waits on an Event, whose plain lock it holds for a moment on
    every wait: the handler must not need that lock (it used to set the Event: deadlock)."""
    result = run(
        """
stopping = threading.Event()
with signals.graceful() as caught:
    with stopping._cond:  # held, as inside Event.wait(), when the signal comes
        os.kill(os.getpid(), signal.SIGTERM)
        busy = sum(range(10_000))  # the handler runs between these bytecodes
    print(caught.reason)
"""
    )
    assert (result.returncode, result.stdout.strip()) == (0, "SIGTERM received"), result.stderr


def test_a_second_signal_ends_the_process_at_once():
    result = run(
        """
with signals.graceful() as caught:
    os.kill(os.getpid(), signal.SIGTERM)
    print(caught.reason, flush=True)
    os.kill(os.getpid(), signal.SIGINT)
    busy = sum(range(10_000))
    print("still running")
"""
    )
    assert result.returncode == 128 + signal.SIGINT
    assert result.stdout.strip() == "SIGTERM received"
    assert "SIGINT again: exiting now" in result.stderr


def test_outside_the_block_the_previous_handlers_are_back():
    result = run(
        """
with signals.graceful():
    pass
print(signal.getsignal(signal.SIGTERM) is signal.SIG_DFL, signal.getsignal(signal.SIGINT))
"""
    )
    assert result.stdout.split()[0] == "True"
    assert "default_int_handler" in result.stdout


def test_signals_handed_to_another_thread_are_handled_while_the_main_thread_joins():
    """A running handler's thread got SIGTERM then SIGINT from the kernel: the main thread,
    waiting for that thread to finish, still exits at once (it used to wait for the handler,
    which meanwhile acknowledged its message)."""
    result = run(
        """
import time
def handler():
    time.sleep(5)
    print("handler finished", flush=True)
running = threading.Thread(target=handler)
running.start()
with signals.graceful() as caught:
    signal.pthread_kill(running.ident, signal.SIGTERM)
    signal.pthread_kill(running.ident, signal.SIGINT)
    signals.join(running, 30)
print("joined", flush=True)
"""
    )
    # Both arrive before the main thread runs a handler: it takes them in signal-number order.
    assert result.returncode in (128 + signal.SIGINT, 128 + signal.SIGTERM), result.stderr
    assert "again: exiting now" in result.stderr
    assert "handler finished" not in result.stdout and "joined" not in result.stdout


def test_the_workers_threads_leave_sigterm_and_sigint_to_the_main_thread():
    result = run(
        """
masks = {}
def thread():
    signals.block_in_this_thread()
    masks["thread"] = signal.pthread_sigmask(signal.SIG_BLOCK, [])
t = threading.Thread(target=thread)
t.start()
t.join()
signals.block_in_this_thread()  # no effect in the main thread
main = signal.pthread_sigmask(signal.SIG_BLOCK, [])
print({signal.SIGTERM, signal.SIGINT} <= masks["thread"], signal.SIGTERM in main)
"""
    )
    assert result.stdout.split() == ["True", "False"], result.stderr
