"""Helpers of the tests of a command's input checks (``bench.preflight``: addresses, tracking_inputs,
paths, backbone_folder); ``serving`` also stands in for a port that is not the service in
tests/bench/cli."""

import contextlib
import socket
import threading
from collections.abc import Callable, Iterator

import pytest

from rankuq.errors import RankuqError


def one_error(check: Callable[[], None]) -> str:
    with pytest.raises(RankuqError) as raised:
        check()
    message = str(raised.value)
    assert "\n" not in message
    return message


@contextlib.contextmanager
def serving(answer: bytes | None) -> Iterator[int]:
    """A TCP server on 127.0.0.1 (its port) that accepts each connection and sends ``answer``, or
    nothing for None, holding it open until the client leaves."""
    with socket.create_server(("127.0.0.1", 0)) as server:

        def serve() -> None:
            with contextlib.suppress(OSError):
                while True:
                    connection, _ = server.accept()
                    if answer is not None:
                        connection.sendall(answer)
                    threading.Thread(target=_hold, args=(connection,), daemon=True).start()

        threading.Thread(target=serve, daemon=True).start()
        yield server.getsockname()[1]


def _hold(connection: socket.socket) -> None:
    """Read until the client leaves (or resets), then close."""
    with connection, contextlib.suppress(OSError):
        while connection.recv(1 << 16):
            pass
