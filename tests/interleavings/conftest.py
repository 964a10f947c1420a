"""Fixtures for the interleaving explorer's tests: one explorer per test file.

An :class:`Explorer` is a context that patches the process for exploring (moto's
``mock_aws``, the runtime's clock, instant sleeps in actor threads, quiet runtime
loggers), so it is scoped to one file: under ``make test``'s ``--dist loadfile`` the
other files of the same worker never run inside it. Setting it up (the table, the
tasks) costs about half a CPU-second, paid once per file.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sfn_patterns_localstack.interleavings.explorer import Explorer
from sfn_patterns_localstack.interleavings.protocols.status_table import StatusTable


@pytest.fixture(scope="module")
def explorer() -> Iterator[Explorer]:
    """The status table with the default scenario: two workers, one task, heartbeats."""
    with Explorer(StatusTable()) as explorer:
        yield explorer
