"""sfn-patterns: five AWS Step Functions orchestration patterns as a Python library.

Each pattern is a subpackage with the same name as its Terraform module,
template directory, tests and CLI group. This top-level module stays free of
imports so that every Lambda package can include it at no cost.
"""

__version__ = "1.0.0"
