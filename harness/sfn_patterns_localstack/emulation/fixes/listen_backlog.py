"""The gateway listens where it was asked to, with as long a queue as the kernel allows.

An AWS endpoint accepts a burst of new connections; a client sees latency, not lost
SYNs. LocalStack 4.14.0 listens through Twisted's ``TCP4ServerEndpoint`` with its
default backlog of 50 (``TwistedRuntimeServer.register`` in
``localstack.runtime.server.twisted``, the same as 4.9.2's): once 50 connections wait
for the reactor thread to accept them, Linux drops the next SYN and the client resends
it after 1 s, then 3, 7, 15 and 31 s.

That is what failed the job-poller's 1,000 concurrent jobs in bench_scale.py (ac6c9f8):
a thousand freshly forked Lambda workers each opened a connection within seconds, the
kernel counted 391 listen-queue overflows, and Run Jobs whose first DynamoDB call waited
31 s for a resent SYN hit their 30-s timeout (Sandbox.Timedout). (It was not the
whole story: with this fix the semaphore's admission p90 at 1,000 was still 1.20 s
after the job-poller's load, and the job-poller needed three more fixes; README.)

LocalStack 4.14.0 also drops the host of an IPv4 ``GATEWAY_LISTEN`` ("TODO: interface =
host?" in the same method): asked for ``127.0.0.1:<port>``, as ``server.start`` asks,
it listens on every interface, so a test run's LocalStack, which trusts any caller's
test credentials, would answer the whole network.

``apply()`` makes the endpoints LocalStack's runtime server creates listen with
:data:`BACKLOG` (the kernel caps it at ``net.core.somaxconn``, 4096 here), and an IPv4
endpoint made without an interface on the host ``GATEWAY_LISTEN`` names for its port.
Nothing else about the server changes. It must run before the server is registered, so
:mod:`..startup` applies it before LocalStack's main module.
"""

from __future__ import annotations

import functools
import logging
import types
from typing import Any

LOG = logging.getLogger(__name__)

BACKLOG = 4096
_APPLIED = "_sfnp_backlog"


def apply(backlog: int = BACKLOG) -> bool:
    """Give the runtime server's TCP endpoints ``backlog``; False if its module moved."""
    try:
        from localstack.runtime.server import twisted as runtime_server
    except ImportError:
        LOG.warning("sfn-patterns listen backlog not applied: no localstack.runtime.server")
        return False
    endpoints = getattr(runtime_server, "endpoints", None)
    if endpoints is None or not hasattr(endpoints, "TCP4ServerEndpoint"):
        LOG.warning("sfn-patterns listen backlog not applied: the server makes no endpoints")
        return False
    if getattr(endpoints, _APPLIED, None) == backlog:
        return True
    original = getattr(endpoints, "_sfnp_original", endpoints)
    shim = types.SimpleNamespace(
        TCP4ServerEndpoint=functools.partial(_tcp4, original.TCP4ServerEndpoint, backlog),
        TCP6ServerEndpoint=functools.partial(original.TCP6ServerEndpoint, backlog=backlog),
        _sfnp_original=original,
        **{_APPLIED: backlog},
    )
    runtime_server.endpoints = shim
    return True


def listen_host(port: int) -> str:
    """The IPv4 host ``GATEWAY_LISTEN`` names for ``port``; "" (every interface) if none.

    IPv6 hosts are LocalStack's own ``TCP6ServerEndpoint``'s (it passes them). With
    two IPv4 hosts on one port the first is used, and the second endpoint fails to
    listen, as both did on every interface before.
    """
    from localstack import config

    for host_and_port in config.GATEWAY_LISTEN:
        if host_and_port.port == port and not config.is_ipv6_address(host_and_port.host):
            return host_and_port.host
    return ""


def _tcp4(make: Any, backlog: int, reactor: Any, port: int, **kwargs: Any) -> Any:
    """Twisted's ``TCP4ServerEndpoint`` with ``backlog``, on the configured host by default."""
    kwargs.setdefault("backlog", backlog)
    kwargs.setdefault("interface", listen_host(port))
    return make(reactor, port, **kwargs)
