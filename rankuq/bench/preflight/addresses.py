"""A command's network addresses, checked before the slow imports (Ray, torch, MLflow take seconds)
and before anything is written: an endpoint accepts a connection within ``CONNECT_TIMEOUT_S``, and
an explicit Ray address answers as Ray's gRPC server does (else Ray logs GCS warnings and waits for
ever). ``tracking_inputs`` and ``backbone_folder`` dial their servers with the same check."""

import socket
from urllib.parse import urlsplit

from rankuq.errors import RankuqError

CONNECT_TIMEOUT_S = 5.0
RAY_DEFAULT_PORT = 6379


def check_endpoint(host: str, port: int, what: str, timeout: float | None = None) -> None:
    """A TCP connection to ``host:port`` opens within ``timeout`` seconds (``CONNECT_TIMEOUT_S`` as it
    is when called, so one setting reaches every probe), or one error naming ``what``."""
    timeout = CONNECT_TIMEOUT_S if timeout is None else timeout
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return
    except OSError as error:
        reason = "no answer" if isinstance(error, TimeoutError) else error.strerror or str(error)
        raise RankuqError(
            f"{what}: {host}:{port} did not accept a connection within {timeout:g} s ({reason}); "
            "check that it is running and the address"
        ) from None


def check_ray_address(address: str | None) -> None:
    """An explicit ``host:port`` (or ``ray://host:port``) Ray address answers; 'auto' and None are
    resolved by Ray itself (None starts a local Ray)."""
    if address is None or address == "auto" or address == "local":
        return
    parts = urlsplit(address if "://" in address else f"ray://{address}")
    try:
        port = parts.port or RAY_DEFAULT_PORT
    except ValueError:
        raise RankuqError(f"--address {address}: not host:port; e.g. --address 10.0.0.5:6379") from None
    if not parts.hostname:
        raise RankuqError(f"--address {address}: not host:port; e.g. --address 10.0.0.5:6379")
    check_endpoint(parts.hostname, port, f"--address {address}")
    problem = _grpc_problem(parts.hostname, port, CONNECT_TIMEOUT_S)
    if problem:  # Ray would log GCS warnings and wait for ever
        raise RankuqError(
            f"--address {address}: {parts.hostname}:{port} accepted a connection but {problem}, so it "
            "is not Ray; give the head node's address as `ray start --head` printed it (port 6379)"
        )


# HTTP/2's client connection preface and an empty SETTINGS frame (RFC 9113 3.4, 6.5): a gRPC server,
# as Ray's GCS and Ray Client are, answers with its own SETTINGS frame. Spelled out here because
# this environment has no grpcio (Ray's core links its own).
HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
HTTP2_SETTINGS = 4


def _grpc_problem(host: str, port: int, timeout: float) -> str | None:
    """None where ``host:port`` answers HTTP/2's preface with a SETTINGS frame within ``timeout``
    seconds; else what it did instead."""
    answer = b""
    try:
        with socket.create_connection((host, port), timeout=timeout) as connection:
            connection.sendall(HTTP2_PREFACE)
            # a frame header is 9 bytes, its 4th the type: anything else is known from that byte on
            while len(answer) < 9 and (len(answer) < 4 or answer[3] == HTTP2_SETTINGS):
                chunk = connection.recv(9 - len(answer))
                if not chunk:
                    break
                answer += chunk
    except TimeoutError:
        return f"gave no answer within {timeout:g} s" if not answer else f"answered only {answer!r}"
    except OSError as error:
        return f"closed it ({error.strerror or error})"
    if len(answer) < 9 or answer[3] != HTTP2_SETTINGS:
        return f"answered {answer!r}, not gRPC (HTTP/2)"
    return None
