"""Entry point of the ``local-process`` Lambda runtime executor.

Kept apart from :mod:`.executor` so that LocalStack's plugin
discovery does not import the executor (and its Lambda internals) unless selected.
LocalStack 4.14.0 finds it as 4.9.2 did: ``runtime_executor.get_runtime_executor`` loads
the ``localstack.lambda.runtime_executor`` plugin named by ``LAMBDA_RUNTIME_EXECUTOR``.
"""

from typing import Any

from localstack.services.lambda_.invocation.plugins import RuntimeExecutorPlugin


class LocalProcessExecutorPlugin(RuntimeExecutorPlugin):
    """Selected with ``LAMBDA_RUNTIME_EXECUTOR=local-process``."""

    name = "local-process"

    def load(self, *args: Any, **kwargs: Any) -> type:
        """Return the executor class, imported on first use."""
        from sfn_patterns_localstack.emulation.lambda_executor.executor import (
            LocalProcessRuntimeExecutor,
        )

        return LocalProcessRuntimeExecutor
