"""The protocols the explorer knows, by their ``--protocol`` name.

Each is a :class:`~..protocol.Protocol` over one pattern's real runtime code. The status
table, the semaphore (strategy callback), sqs-throttle and the dag dispatcher are here.
"""

from __future__ import annotations

from sfn_patterns_localstack.interleavings.protocol import Protocol, protocol_registry
from sfn_patterns_localstack.interleavings.protocols.dag_aggregate import DagAggregate
from sfn_patterns_localstack.interleavings.protocols.semaphore import Semaphore
from sfn_patterns_localstack.interleavings.protocols.sqs_throttle import SqsThrottle
from sfn_patterns_localstack.interleavings.protocols.status_table import StatusTable

PROTOCOLS: dict[str, type[Protocol]] = protocol_registry(
    StatusTable, Semaphore, SqsThrottle, DagAggregate
)
