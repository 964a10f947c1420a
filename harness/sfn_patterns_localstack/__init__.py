"""LocalStack harness of sfn-patterns: plugins that let LocalStack 4.9.2 run without Docker.

LocalStack loads these through its entry points (see ``pyproject.toml``):

* ``dynamodb:moto`` - a DynamoDB provider served by moto, because the default
  provider downloads DynamoDB Local and a Java runtime at start-up.
* ``local-process`` - a Lambda runtime executor that runs the function's unzipped
  code in a local Python process, because the only built-in executor is Docker.

:mod:`sfn_patterns_localstack.server` starts and stops LocalStack with both enabled.
"""
