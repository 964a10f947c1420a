"""CloudWatch metrics LocalStack 4.14.0 does not publish, shaped as AWS documents them.

See README.md in this folder: what is emitted, where it is hooked, and what it costs.
"""
