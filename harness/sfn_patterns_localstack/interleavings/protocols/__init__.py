"""The protocols the explorer knows, by their ``--protocol`` name.

Each is a :class:`~..protocol.Protocol` over one pattern's real runtime code: the status
table and sqs-throttle; the semaphore and the dag dispatcher are not here yet.
"""

from __future__ import annotations

from sfn_patterns_localstack.interleavings.protocol import Protocol, protocol_registry
from sfn_patterns_localstack.interleavings.protocols.sqs_throttle import SqsThrottle
from sfn_patterns_localstack.interleavings.protocols.status_table import StatusTable

PROTOCOLS: dict[str, type[Protocol]] = protocol_registry(StatusTable, SqsThrottle)
