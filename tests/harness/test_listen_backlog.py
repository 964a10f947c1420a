"""The gateway queues a burst of new connections instead of dropping their SYNs.

fixes.listen_backlog: LocalStack's runtime server listened with Twisted's backlog of 50;
a burst of freshly forked Lambda workers overflowed it and waited 1-31 s for resent
SYNs. The endpoints it makes now listen with the kernel's full backlog, and the test
session's own LocalStack (started through emulation.startup) does. It also listened on
every interface when asked for 127.0.0.1; now on the host asked for.
"""

from __future__ import annotations

import select
import shutil
import socket
import subprocess
import time
from pathlib import Path
from urllib.parse import urlparse

import pytest

from sfn_patterns_localstack.emulation.fixes import listen_backlog

BURST = 300


def _connected_in_burst(port: int, count: int) -> int:
    """How many of ``count`` connections opened at once complete their handshake."""
    clients = []
    try:
        for _ in range(count):
            client = socket.socket()
            client.setblocking(False)
            client.connect_ex(("127.0.0.1", port))
            clients.append(client)
        # A connection whose SYN was dropped stays unwritable until the resend, 1 s on.
        deadline = time.monotonic() + 0.5
        connected: set[socket.socket] = set()
        while (left := deadline - time.monotonic()) > 0:
            waiting = [c for c in clients if c not in connected]
            _, writable, _ = select.select([], waiting, [], left)
            connected.update(
                c for c in writable if c.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0
            )
            if len(connected) == count:
                break
        return len(connected)
    finally:
        for client in clients:
            client.close()


def _listen(endpoints) -> tuple[object, int]:
    """Listen on a free loopback port through ``endpoints``; the port and its number.

    The reactor is not run, so nothing is accepted: only the listen queue holds the burst.
    """
    from twisted.internet import reactor
    from twisted.internet.protocol import Factory, Protocol

    listened = []
    endpoint = endpoints.TCP4ServerEndpoint(reactor, 0, interface="127.0.0.1")
    endpoint.listen(Factory.forProtocol(Protocol)).addCallback(listened.append)
    (port,) = listened  # listenTCP listens at once, reactor or not
    return port, port.getHost().port


def test_a_burst_of_connections_waits_in_the_queue_not_in_syn_resends() -> None:
    from localstack.runtime.server import twisted as runtime_server

    assert listen_backlog.apply() is True
    original = runtime_server.endpoints._sfnp_original
    before, number = _listen(original)  # Twisted's own endpoint: LocalStack 4.14.0's
    try:
        unfixed = _connected_in_burst(number, BURST)
    finally:
        before.stopListening()
    after, number = _listen(runtime_server.endpoints)
    try:
        fixed = _connected_in_burst(number, BURST)
    finally:
        after.stopListening()
    assert unfixed < 60, f"the unpatched backlog of 50 queued {unfixed} of {BURST}"
    assert fixed == BURST


def test_applying_twice_keeps_one_shim_over_twisted_s_endpoints() -> None:
    from localstack.runtime.server import twisted as runtime_server
    from twisted.internet import endpoints

    assert listen_backlog.apply() is True
    assert listen_backlog.apply() is True
    assert runtime_server.endpoints._sfnp_original is endpoints
    assert runtime_server.endpoints.TCP4ServerEndpoint.args[0] is endpoints.TCP4ServerEndpoint
    assert runtime_server.endpoints.TCP6ServerEndpoint.keywords == {"backlog": 4096}


def test_an_ipv4_endpoint_listens_on_the_host_gateway_listen_names(monkeypatch) -> None:
    from localstack import config
    from localstack.runtime.server import twisted as runtime_server
    from twisted.internet import reactor

    assert listen_backlog.apply() is True
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    free = probe.getsockname()[1]
    probe.close()
    listen = [
        config.HostAndPort("::1", free),  # the IPv6 endpoint's: not an IPv4 interface
        config.HostAndPort("127.0.0.1", free),
        config.HostAndPort("0.0.0.0", free + 1),
        config.HostAndPort("::", free + 2),
    ]
    monkeypatch.setattr(config, "GATEWAY_LISTEN", listen)
    made = runtime_server.endpoints.TCP4ServerEndpoint(reactor, free)
    assert (made._interface, made._backlog) == ("127.0.0.1", 4096)
    assert runtime_server.endpoints.TCP4ServerEndpoint(reactor, free + 1)._interface == "0.0.0.0"
    # A port with an IPv6 host only, one GATEWAY_LISTEN does not name, and an interface
    # given: as Twisted's default.
    assert runtime_server.endpoints.TCP4ServerEndpoint(reactor, free + 2)._interface == ""
    assert runtime_server.endpoints.TCP4ServerEndpoint(reactor, free + 3)._interface == ""
    given = runtime_server.endpoints.TCP4ServerEndpoint(reactor, free, interface="::1")
    assert given._interface == "::1"


def test_the_session_s_localstack_listens_with_the_full_backlog(
    localstack_endpoint: str,
) -> None:
    ss = shutil.which("ss")
    if ss is None:
        pytest.fail("ss (iproute2) is needed to read a listening socket's backlog")
    port = urlparse(localstack_endpoint).port
    listing = subprocess.run(
        [ss, "-ltnH", f"sport = :{port}"], capture_output=True, text=True, check=True
    ).stdout.split()
    # State, Recv-Q, Send-Q (for a listening socket: its backlog), local address, peer.
    somaxconn = int(Path("/proc/sys/net/core/somaxconn").read_text())
    assert int(listing[2]) == min(listen_backlog.BACKLOG, somaxconn), listing
    # server.start asks for 127.0.0.1: the loopback only, not every interface.
    assert listing[3] == f"127.0.0.1:{port}", listing
