"""A command's network addresses, checked before anything is written: each bad one is one RankuqError
of one line that names the option and what to do (the command's exit code: tests/bench/cli)."""

import socket
import time

import pytest

from rankuq.bench.preflight import addresses
from rankuq.bench.preflight.addresses import check_endpoint, check_ray_address
from rankuq.bench.preflight.tracking_inputs import check_tracking_uri

from .conftest import one_error, serving


def closed_port() -> int:
    """A port of 127.0.0.1 nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_closed_port_is_refused_at_once_naming_the_option():
    port = closed_port()
    message = one_error(lambda: check_endpoint("127.0.0.1", port, "--tracking-uri http://x", timeout=2))
    assert message == (
        f"--tracking-uri http://x: 127.0.0.1:{port} did not accept a connection within 2 s (Connection "
        "refused); check that it is running and the address"
    )
    message = one_error(lambda: check_ray_address(f"ray://127.0.0.1:{port}"))
    assert message.startswith(f"--address ray://127.0.0.1:{port}: 127.0.0.1:{port} did not accept")


def test_a_listening_port_passes_the_connection_check():
    with serving(None) as port:
        check_endpoint("127.0.0.1", port, "--address")


@pytest.mark.parametrize(
    ("answer", "ray_says", "tracking_says"),
    [
        (None, "gave no answer within 1 s, so it is not Ray", "gave no HTTP answer (no answer within 1 s)"),
        (
            b"220 smtp ready\r\n",
            "answered b'220 smtp ', not gRPC (HTTP/2), so it is not Ray",
            "gave no HTTP answer (not HTTP: BadStatusLine('220 smtp ready\\r\\n'))",
        ),
    ],
    ids=["accepts and never answers", "answers garbage"],
)
def test_a_port_that_accepts_but_is_not_the_service_is_refused_in_time(
    monkeypatch, answer, ray_says, tracking_says
):
    """Ray would log GCS warnings for ever, MLflow wait 120 s a try for 7 tries: one line instead."""
    monkeypatch.setattr(addresses, "CONNECT_TIMEOUT_S", 1.0)
    with serving(answer) as port:
        started = time.monotonic()
        message = one_error(lambda: check_ray_address(f"127.0.0.1:{port}"))
        assert message == (
            f"--address 127.0.0.1:{port}: 127.0.0.1:{port} accepted a connection but {ray_says}; give "
            "the head node's address as `ray start --head` printed it (port 6379)"
        )
        uri = f"http://127.0.0.1:{port}"
        assert one_error(lambda: check_tracking_uri(uri)) == (
            f"--tracking-uri {uri}: 127.0.0.1:{port} accepted a connection but {tracking_says}; check "
            "that an MLflow tracking server (`mlflow server`) runs at that address"
        )
        assert time.monotonic() - started < 4  # each probe waits its 1 s at most


@pytest.mark.parametrize("address", [None, "auto", "local"])
def test_addresses_ray_resolves_itself_are_not_dialled(address):
    check_ray_address(address)


@pytest.mark.parametrize("address", ["127.0.0.1:notaport", ":6379", "ray://:6379"])
def test_an_address_that_is_not_host_port_is_refused(address):
    assert one_error(lambda: check_ray_address(address)) == (
        f"--address {address}: not host:port; e.g. --address 10.0.0.5:6379"
    )
