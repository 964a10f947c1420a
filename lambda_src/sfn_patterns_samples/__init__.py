"""Sample and demo Lambda code: packed into a zip only when a module's sample is enabled.

Not part of any distribution: the runtime library (``sfn_patterns``) never carries it.
"""
