"""sfn-patterns: the plan-time planner and the ``sfn-patterns`` command line.

The modules run the dag-aggregate planner at ``terraform plan`` time with any
``python3`` that has this distribution's dependencies (networkx, sqlglot, jinja2,
click); the runtime library that goes into Lambda zips is the separate
``sfn-patterns-runtime`` distribution (import name ``sfn_patterns``).
"""

__version__ = "1.0.0"
