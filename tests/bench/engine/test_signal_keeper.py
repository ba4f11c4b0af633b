"""The driver's handler survives native code that resets it (issue 48: a SIGTERM once scoring had
started killed the driver at once). SIGWINCH stands in for SIGTERM: its default action is to
ignore it, so a failing keeper fails the test instead of killing it."""

import contextlib
import ctypes
import ctypes.util
import os
import signal
import time

from rankuq.bench.engine.signal_keeper import CHECK_EVERY_S, keep_handler, reassert

LIBC = ctypes.CDLL(ctypes.util.find_library("c"))


def delivered(reset_by_native_code: bool, keep: bool, reassert_after: bool = False) -> bool:
    """Whether the Python handler runs for a SIGWINCH sent after libc's signal() reset it, with the
    keeper running (``keep``) or ``reassert`` called after the reset (``reassert_after``)."""
    seen = []
    previous = signal.signal(signal.SIGWINCH, lambda *_: seen.append(True))
    try:
        with keep_handler(signal.SIGWINCH) if keep else contextlib.nullcontext():
            if reset_by_native_code:
                LIBC.signal(signal.SIGWINCH, 0)  # SIG_DFL at the C level, as Ray's native code does
            if reassert_after:
                reassert(signal.SIGWINCH)
            time.sleep(5 * CHECK_EVERY_S)
            os.kill(os.getpid(), signal.SIGWINCH)
            time.sleep(0.05)  # Python runs its handler at the next bytecode of the main thread
        return bool(seen)
    finally:
        signal.signal(signal.SIGWINCH, previous)


def test_a_handler_reset_in_native_code_is_put_back():
    assert not delivered(reset_by_native_code=True, keep=False)  # what happened to SIGTERM
    assert delivered(reset_by_native_code=True, keep=True)
    assert delivered(reset_by_native_code=False, keep=True)


def test_reassert_puts_back_the_handler_python_holds_after_native_code_reset_it():
    """What ray.shutdown needs after the keeper stopped: Ray's logger resets SIGTERM on its way out."""
    assert delivered(reset_by_native_code=True, keep=False, reassert_after=True)
