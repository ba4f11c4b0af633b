"""Keep the driver's SIGTERM handler installed while Ray runs.

Once scoring starts, something inside Ray's native code sets SIGTERM (with SIGSEGV, SIGILL, SIGFPE
and SIGABRT) back to the default action at the C level, while Python's ``signal.getsignal`` still
names rankuq's handler: a SIGTERM then killed the driver at once (rc 143, no "interrupted" line;
issue 48, 6 of 6 tries). Python can reinstall a handler only from the main thread, which is blocked
in Ray Data then; so a daemon thread reads the C-level action with ``sigaction(2)`` and writes back
the one Python installed whenever it finds another. Linux and macOS (libc's ``sigaction``); where
libc cannot be loaded the keeper does nothing.

``ray.shutdown`` does the same once more, after the keeper has stopped: Ray's C++ logger, shut down
with it, sets SIGTERM, SIGSEGV, SIGILL, SIGFPE and SIGABRT to the default action (``RayLog::
UninstallSignalAction``; seen in /proc's SigCgt, 0x44f8 -> 0x50, the moment scoring's Ray stopped, and
the probes that run after it were then killed by SIGTERM). ``reassert`` puts Python's handler back.
"""

import ctypes
import ctypes.util
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

CHECK_EVERY_S = 0.1
# struct sigaction, opaque: glibc's is 152 bytes on x86-64 and arm64 (macOS's 16). Only its first
# field, the handler's address, is compared; the whole is written back as it was read.
ACTION_BYTES = 256


def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name, use_errno=True) if name else None
    except OSError:
        return None


def _action(libc: ctypes.CDLL, signum: int) -> ctypes.Array[ctypes.c_char]:
    """The C-level action of ``signum`` as it is now."""
    action = ctypes.create_string_buffer(ACTION_BYTES)
    libc.sigaction(signum, None, action)
    return action


def _handler(action: ctypes.Array[ctypes.c_char]) -> bytes:
    return action.raw[: ctypes.sizeof(ctypes.c_void_p)]


@contextmanager
def keep_handler(signum: int = signal.SIGTERM) -> Iterator[None]:
    """While the block runs, put back the C-level action ``signum`` has now (the handler Python
    installed) within ``CHECK_EVERY_S`` whenever native code replaces it."""
    libc = _libc()
    if libc is None or not callable(signal.getsignal(signum)):
        yield
        return
    installed = _action(libc, signum)
    done = threading.Event()

    def keep() -> None:
        while not done.wait(CHECK_EVERY_S):
            if _handler(_action(libc, signum)) != _handler(installed):
                libc.sigaction(signum, installed, None)

    keeper = threading.Thread(target=keep, name="rankuq-signal-keeper", daemon=True)
    keeper.start()
    try:
        yield
    finally:
        done.set()
        keeper.join()


def reassert(signum: int = signal.SIGTERM) -> None:
    """Write the handler Python's ``signal`` module holds for ``signum`` back to the C level, where
    native code may have reset it behind Python's back. Only the main thread may set handlers; a
    handler Python did not install (``getsignal`` is None) is left alone."""
    handler = signal.getsignal(signum)
    if handler is not None and threading.current_thread() is threading.main_thread():
        signal.signal(signum, handler)
