"""Generate the Inputs and Outputs tables of every module README from the Terraform code.

READMEs covered: the repository README (the root module), modules/*/README.md and
examples/complete/README.md.

The tables sit between ``<!-- BEGIN_TF_DOCS -->`` and ``<!-- END_TF_DOCS -->``
(terraform-docs' markers, so the format is familiar); everything else in a README
is hand-written. Variables and outputs are read with terraform-config-inspect,
which bootstrap builds from the Go module proxy (terraform-docs is not served
there).

    python scripts/tfdocs.py          # rewrite the tables
    python scripts/tfdocs.py --check  # exit 1 and name the READMEs that are stale
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
BEGIN, END = "<!-- BEGIN_TF_DOCS -->", "<!-- END_TF_DOCS -->"


def module_dirs() -> list[Path]:
    """The root module (README.md at the top), every module under modules/, and examples/complete.

    examples/complete is the root module's reference caller: its outputs are what the
    demo and its tests read, so its README documents them like a module's. The other
    examples keep hand-written READMEs.
    """
    modules = sorted(p for p in (REPO_ROOT / "modules").iterdir() if p.is_dir())
    return [REPO_ROOT, *modules, REPO_ROOT / "examples" / "complete"]


def _inspect_binary() -> str:
    local = REPO_ROOT / ".venv/bin/terraform-config-inspect"
    found = str(local) if local.exists() else shutil.which("terraform-config-inspect")
    if not found:
        sys.exit("terraform-config-inspect not found: run `make bootstrap`")
    return found


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _default(variable: dict) -> str:
    if variable.get("required"):
        return "n/a"
    return f"`{json.dumps(variable.get('default'))}`"


def tables(module: Path) -> str:
    """The Markdown block for one module."""
    spec = json.loads(
        subprocess.run(
            [_inspect_binary(), "--json", str(module)], capture_output=True, text=True, check=True
        ).stdout
    )
    lines = [BEGIN, "## Inputs", ""]
    variables = sorted(spec["variables"].values(), key=lambda v: (not v["required"], v["name"]))
    if variables:
        lines += ["| Name | Description | Type | Default | Required |", "|---|---|---|---|:---:|"]
        for v in variables:
            lines.append(
                f"| `{v['name']}` | {_cell(v.get('description', ''))} | "
                f"`{_cell(v.get('type') or 'any')}` | {_cell(_default(v))} | "
                f"{'yes' if v['required'] else 'no'} |"
            )
    else:
        lines.append("No inputs.")
    lines += ["", "## Outputs", ""]
    outputs = sorted(spec["outputs"].values(), key=lambda o: o["name"])
    if outputs:
        lines += ["| Name | Description |", "|---|---|"]
        lines += [f"| `{o['name']}` | {_cell(o.get('description', ''))} |" for o in outputs]
    else:
        lines.append("No outputs.")
    lines.append(END)
    return "\n".join(lines)


def updated(readme: Path, block: str) -> str:
    """The README text with its generated block replaced (or appended)."""
    text = readme.read_text() if readme.exists() else f"# {readme.parent.name}\n"
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        return f"{head}{block}{tail}"
    return f"{text.rstrip()}\n\n{block}\n"


def main() -> int:
    """Rewrite or check every module README's generated tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--check", action="store_true", help="report stale READMEs, write nothing")
    args = parser.parse_args()
    stale = []
    for module in module_dirs():
        readme = module / "README.md"
        new = updated(readme, tables(module))
        if readme.exists() and readme.read_text() == new:
            continue
        stale.append(readme.relative_to(REPO_ROOT))
        if not args.check:
            readme.write_text(new)
    if args.check and stale:
        print("stale generated docs (run `python scripts/tfdocs.py`):", *stale, sep="\n  ")
        return 1
    for path in [] if args.check else stale:
        print(f"updated {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
