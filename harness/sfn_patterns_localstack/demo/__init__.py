"""``sfn-patterns demo``: deploy every pattern, run each once, write an HTML report.

:mod:`.run` deploys and runs, :mod:`.patterns` holds one runner per pattern,
:mod:`.progress` prints progress on stderr and :mod:`.report` writes the report.
"""
