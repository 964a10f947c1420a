"""dag-aggregate: plan SQL aggregate tasks into a dependency DAG and render Step Functions.

Pipeline: ``sql_deps`` (files -> tasks and reads, via sqlglot) -> ``graph`` (networkx
DAG, fast transitive reduction, levels, L_ij groups) -> ``strategies`` (stages) ->
``render`` (ASL from ``templates/dag-aggregate``), plus ``simulate`` and ``draw``.
``planner.plan_from_dir`` is the entry point; ``cli.group`` is ``sfn-patterns dag``.
"""
