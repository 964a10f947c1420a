# Nothing to output: tests/terraform/test_iam_static.py reads the plan itself.
