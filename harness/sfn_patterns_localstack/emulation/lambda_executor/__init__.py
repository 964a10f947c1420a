"""The ``local-process`` Lambda runtime executor: handler code in local processes.

:mod:`.plugin` is LocalStack's entry point, :mod:`.executor` the LocalStack side
(environments, invokes, timeouts), :mod:`.worker` the process that runs the handler
(and the fork server that forks it).
"""
