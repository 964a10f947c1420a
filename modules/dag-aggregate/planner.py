"""Run the dag-aggregate planner at ``terraform plan`` time, with whatever python3 is there.

The module calls ``python3 planner.py module-data ...`` once per ``terraform plan``
(the plan and every definition its strategy needs, from one read of the SQL). This
file uses the standard library only and checks the interpreter before importing the
planner, so a CI image
whose ``python3`` lacks a dependency (or has one too old) fails the plan with one
line that names what is missing and the one command that fixes it, never a Python
traceback inside Terraform's error.

The planner itself is this checkout's ``cli/sfn_patterns_cli`` (put first on
``sys.path``, so a different installed version never shadows it). The minimum
versions below are the ones ``cli/pyproject.toml`` declares; a test keeps them equal.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

MIN_PYTHON = (3, 9)
# distribution -> (import name, minimum version)
REQUIREMENTS = {
    "networkx": ("networkx", "3.2"),
    "sqlglot": ("sqlglot", "25.0"),
    "jinja2": ("jinja2", "3.1"),
    "click": ("click", "8.1"),
}
CLI_SOURCE = Path(__file__).resolve().parents[2] / "cli"


def _version_tuple(text: str) -> tuple[int, ...]:
    parts = []
    for piece in text.split(".")[:3]:
        digits = re.match(r"\d+", piece)
        if not digits:
            break
        parts.append(int(digits.group()))
    return tuple(parts)


def problems() -> list[str]:
    """What this interpreter lacks, one phrase each (empty when it can run the planner)."""
    if sys.version_info[:2] < MIN_PYTHON:
        return [f"Python {'.'.join(map(str, MIN_PYTHON))}+ (this is {sys.version.split()[0]})"]
    from importlib import metadata

    found = []
    for distribution, (_, minimum) in REQUIREMENTS.items():
        try:
            version = metadata.version(distribution)
        except metadata.PackageNotFoundError:
            found.append(f"{distribution} (not installed; needs >= {minimum})")
            continue
        if _version_tuple(version) < _version_tuple(minimum):
            found.append(f"{distribution} {version} (needs >= {minimum})")
    return found


def fix_command() -> str:
    """The one command that installs what the planner needs into this interpreter."""
    specs = " ".join(f"'{name}>={minimum}'" for name, (_, minimum) in REQUIREMENTS.items())
    return f"{sys.executable} -m pip install {specs}"


def main() -> None:
    """Check the interpreter, then hand the arguments to ``sfn-patterns dag``."""
    missing = problems()
    if missing:
        sys.stderr.write(
            f"dag-aggregate planner: {sys.executable} lacks {'; '.join(missing)}. "
            f"Fix: {fix_command()} (or set the module's python_executable to a Python "
            "that has them)\n"
        )
        sys.exit(2)
    sys.path.insert(0, str(CLI_SOURCE))
    from sfn_patterns_cli.dag_aggregate.cli import group

    group(prog_name="planner.py")


if __name__ == "__main__":
    main()
