"""Runtime of the ``dependency`` strategy: the Lambda behind the coordinator and task machines.

Packed alone in the ``dag-aggregate`` Lambda bundle (boto3 only; it must not import the
planner's networkx/sqlglot/jinja2). ``store`` holds the DynamoDB layout, ``dispatch``
the scheduling logic, ``handler`` the Lambda entry point.
"""
