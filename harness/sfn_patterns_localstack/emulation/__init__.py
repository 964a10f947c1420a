"""What makes LocalStack 4.14.0 behave like AWS here, one subpackage or module per job.

* :mod:`.plugins` - the module LocalStack's entry points load at start-up: it applies
  every fix and serves ``dynamodb:moto`` (DynamoDB on moto, with each operation atomic).
* :mod:`.fixes` - patches to LocalStack's own services where 4.14.0 differs from AWS
  (StopExecution of a parked task, a disabled rule's deliveries, asynchronous invokes)
  or wastes CPU (definitions parsed per execution, clients built per task).
* :mod:`.lambda_executor` - runs each function's unzipped code in a local process
  (the only built-in executor is Docker).
* :mod:`.redshift_data` - the Redshift Data API on an embedded DuckDB warehouse
  (LocalStack community has none).
* :mod:`.iam` - every call a role session makes is decided by its IAM policies, the way
  AWS decides it (``SFNP_IAM=enforce|audit|off``); LocalStack community trusts every caller.
* :mod:`.faults` - AWS's failure modes injected from a seeded plan (throttling, 5xx,
  latency, stale listings, redeliveries, Lambda handlers killed or timed out), so the
  patterns' invariants can be tested under them (LocalStack's Chaos API is paid).
* :mod:`.callers` - the role session behind a request's access key (who is calling),
  for fault matching and IAM.
"""
