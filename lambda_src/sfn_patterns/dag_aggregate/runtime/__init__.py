"""Runtime of the ``dependency`` strategy: the Lambda behind the coordinator and task machines.

Packed alone in the ``dag-aggregate`` Lambda bundle (boto3 only; it must not import the
planner's networkx/sqlglot/jinja2). ``store`` owns the runs table (every DynamoDB
expression), ``dispatch`` the scheduling protocol, ``selection`` the graph selectors,
``artifacts`` the run_results document in S3, ``handler`` the Lambda entry point.
"""
