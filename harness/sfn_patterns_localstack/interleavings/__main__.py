"""``python -m sfn_patterns_localstack.interleavings``: see :mod:`.cli`."""

from sfn_patterns_localstack.interleavings.cli import main

raise SystemExit(main())
