"""CloudWatch metrics LocalStack 4.9.2 does not publish, shaped as AWS documents them.

See README.md in this folder: what is emitted, where it is hooked, and what it costs.
"""
