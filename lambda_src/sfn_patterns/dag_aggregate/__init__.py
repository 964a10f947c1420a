"""dag-aggregate runtime: the dependency strategy's scheduler Lambda (``runtime``).

The planner that turns SQL files into a DAG and ASL runs at ``terraform plan`` time
and lives in the ``sfn-patterns`` distribution (``sfn_patterns_cli.dag_aggregate``);
only this runtime is packed into the Lambda zip.
"""
