"""LocalStack harness of sfn-patterns: LocalStack 4.14.0 in-process, made to behave like AWS.

Laid out by job:

* :mod:`.server` - start and stop LocalStack in-process on loopback (no Docker);
* :mod:`.emulation` - what makes LocalStack behave like AWS here: the plugins LocalStack
  loads through its entry points (DynamoDB on moto, the local-process Lambda executor,
  the Redshift Data API on DuckDB) and the fixes to its own services;
* :mod:`.terraform` - apply a configuration to LocalStack and check what it leaves;
* :mod:`.executions` - read Step Functions executions (histories, waits, overlaps);
* :mod:`.asl` - render and validate ASL offline with LocalStack's parser;
* :mod:`.demo` - ``sfn-patterns demo`` and its report; :mod:`.commands` - the harness's
  ``sfn-patterns`` commands;
* :mod:`.clients` - boto3 clients for an endpoint.
"""
