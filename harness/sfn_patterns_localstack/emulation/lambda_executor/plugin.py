"""Entry point of the ``local-process`` Lambda runtime executor.

Kept apart from :mod:`.executor` so that LocalStack's plugin
discovery does not import the executor (and its Lambda internals) unless selected.
"""

from localstack.services.lambda_.invocation.plugins import RuntimeExecutorPlugin


class LocalProcessExecutorPlugin(RuntimeExecutorPlugin):
    """Selected with ``LAMBDA_RUNTIME_EXECUTOR=local-process``."""

    name = "local-process"

    def load(self, *args, **kwargs):
        """Return the executor class, imported on first use."""
        from sfn_patterns_localstack.emulation.lambda_executor.executor import (
            LocalProcessRuntimeExecutor,
        )

        return LocalProcessRuntimeExecutor
