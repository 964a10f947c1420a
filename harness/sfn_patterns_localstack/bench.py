"""What the benchmark scripts (``scripts/bench_*.py``) share about their LocalStack.

Each script runs on the LocalStack ``LOCALSTACK_ENDPOINT`` names, or starts one of its
own and throws it away afterwards. What it applies is destroyed only on the former, and
not with ``--keep``: the test suite's smokes run on the suite's own LocalStacks, which
are thrown away too, and a destroy there only costs CPU.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import os
from collections.abc import Callable, Iterator

KEEP_HELP = (
    "with LOCALSTACK_ENDPOINT: leave what is applied there, not destroy it (for a "
    "LocalStack that is thrown away afterwards, as the test suite's are)"
)


def localstack_label() -> str:
    """``LocalStack X.Y.Z``: the release the benchmark ran on, as installed (for its table)."""
    return f"LocalStack {importlib.metadata.version('localstack-core')}"


def add_keep_option(parser: argparse.ArgumentParser) -> None:
    """``--keep``, the same option and help in every benchmark."""
    parser.add_argument("--keep", action="store_true", help=KEEP_HELP)


@contextlib.contextmanager
def localstack(
    progress: Callable[[str], None], keep: bool, extra_env: dict[str, str] | None = None
) -> Iterator[tuple[str, bool]]:
    """Yield ``(endpoint, destroy)``: LOCALSTACK_ENDPOINT's LocalStack, else one started here.

    ``destroy`` is true on a LocalStack this process did not start, unless ``keep``;
    one started here is stopped (and its work directory removed) on the way out.
    ``extra_env`` configures one started here (LOCALSTACK_ENDPOINT's keeps its own),
    without changing this process's environment.
    """
    endpoint = os.environ.get("LOCALSTACK_ENDPOINT")
    if endpoint:
        yield endpoint.rstrip("/"), not keep
        return
    from sfn_patterns_localstack import server

    progress("starting LocalStack")
    instance = server.start(extra_env=extra_env)
    try:
        yield instance.endpoint, False
    finally:
        instance.stop()
