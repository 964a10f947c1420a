"""Every example has a README a platform engineer can follow, and its commands exist.

Each directory under ``examples/`` needs a ``README.md`` with hand-written text above
the terraform-docs block (a title and a "Run it" section), the block's markers (where
the directory holds Terraform; ``examples/ci`` holds pipelines), and
no command that names a variable or output the example does not declare: a
``-var name=...`` must match a ``variable "name"`` of the example's ``.tf`` files, a
``terraform output -raw X`` an ``output "X"``, and so must the keys of the variable
dicts the LocalStack recipes pass to the harness (``ws.apply({"name_prefix": ...})``).
The names are read from the ``.tf`` files with a regular expression, not from the
README's generated tables, so a renamed variable fails here even while the tables are
stale.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES_DIR = REPO / "examples"
BEGIN, END = "<!-- BEGIN_TF_DOCS -->", "<!-- END_TF_DOCS -->"

VARIABLE = re.compile(r'^\s*variable\s+"([^"]+)"', re.MULTILINE)
OUTPUT = re.compile(r'^\s*output\s+"([^"]+)"', re.MULTILINE)
# -var name=..., -var=name=..., -var 'name=...', -var "name=..." (not -var-file).
VAR_FLAG = re.compile(r"""-var(?:[ \t]+|=)['"]?([A-Za-z_][A-Za-z0-9_-]*)=""")
# ws.apply({...}) / ws.destroy({...}) of the LocalStack recipes: the dict's keys are variables.
WORKSPACE_VARS = re.compile(r"\.(?:apply|destroy)\(\{([^}]*)\}")
DICT_KEY = re.compile(r"""["']([A-Za-z_][A-Za-z0-9_-]*)["']\s*:""")
# terraform output [-raw|-json|...] NAME (on one line; a bare `terraform output` names none).
OUTPUT_CMD = re.compile(r"terraform output((?:[ \t]+-[\w-]+)*)[ \t]+([A-Za-z_][A-Za-z0-9_-]*)")
TITLE = re.compile(r"^# \S", re.MULTILINE)
RUN_SECTION = re.compile(r"^##+ .*\brun\b", re.MULTILINE | re.IGNORECASE)


def example_dirs() -> list[Path]:
    """Every directory under examples/ (with or without Terraform files: each needs a README)."""
    return sorted(p for p in EXAMPLES_DIR.iterdir() if p.is_dir() and not p.name.startswith("."))


def declared(example: Path, pattern: re.Pattern[str]) -> set[str]:
    """Names a regex finds in the example's own .tf files (not its modules')."""
    return {m for tf in example.glob("*.tf") for m in pattern.findall(tf.read_text())}


def readme_problems(example: Path) -> list[str]:
    """What is missing or wrong in ``example``'s README; empty when it is fine."""
    readme = example / "README.md"
    if not readme.is_file():
        return [f"{example.name}: no README.md"]
    text = readme.read_text()
    problems = []
    begin, end = text.find(BEGIN), text.find(END)
    if not any(example.glob("*.tf")):  # no Terraform (examples/ci): no tables to generate
        begin = len(text)
    elif begin < 0 or end < begin:
        problems.append(f"{example.name}: no {BEGIN} ... {END} block (run make tf-docs)")
        begin = len(text)
    hand_written = text[:begin]
    if not TITLE.search(hand_written):
        problems.append(f"{example.name}: no '# Title' above the terraform-docs block")
    if not RUN_SECTION.search(hand_written):
        problems.append(f"{example.name}: no '## Run it ...' section above the block")
    variables, outputs = declared(example, VARIABLE), declared(example, OUTPUT)
    used = set(VAR_FLAG.findall(text))
    used |= {key for body in WORKSPACE_VARS.findall(text) for key in DICT_KEY.findall(body)}
    for name in sorted(used - variables):
        problems.append(f"{example.name}: -var {name}=... but no variable {name!r} in *.tf")
    for name in sorted({m[1] for m in OUTPUT_CMD.findall(text)} - outputs):
        problems.append(f"{example.name}: terraform output {name} but no output {name!r} in *.tf")
    return problems


def test_every_pattern_has_an_example() -> None:
    names = {p.name for p in example_dirs()}
    expected = {"complete", "dag-aggregate", "job-poller", "semaphore", "smoke"}
    assert names >= expected | {"sqs-throttle", "status-table"}, names


@pytest.mark.parametrize("example", example_dirs(), ids=lambda p: p.name)
def test_example_readme_is_written_and_its_commands_exist(example: Path) -> None:
    assert readme_problems(example) == []


# --- the checker itself fails where it should ---------------------------------------

GOOD = f"""# Demo

Deploys one table.

## Run it on LocalStack

```bash
terraform apply -var name_prefix=me -var='region=eu-west-1'
aws x --arn "$(terraform output -raw table_arn)"
```

```python
ws.apply({{"name_prefix": "me",
          "region": "eu-west-1"}})
```

{BEGIN}
## Inputs
{END}
"""


def _example(tmp_path: Path, readme: str | None) -> Path:
    example = tmp_path / "demo"
    example.mkdir()
    (example / "variables.tf").write_text(
        'variable "name_prefix" {\n  type = string\n}\n\nvariable "region" {}\n'
    )
    (example / "outputs.tf").write_text('output "table_arn" {\n  value = 1\n}\n')
    if readme is not None:
        (example / "README.md").write_text(readme)
    return example


def test_checker_accepts_a_complete_readme(tmp_path: Path) -> None:
    assert readme_problems(_example(tmp_path, GOOD)) == []


@pytest.mark.parametrize(
    ("readme", "expected"),
    [
        (None, "no README.md"),
        (GOOD.replace(BEGIN, ""), "no <!-- BEGIN_TF_DOCS -->"),
        (GOOD.replace(END, ""), "no <!-- BEGIN_TF_DOCS -->"),
        (f"{BEGIN}\n{END}\n", "no '# Title'|no '## Run it"),
        (GOOD.replace("# Demo", "Demo"), "no '# Title'"),
        (GOOD.replace("## Run it on LocalStack", "## Usage"), "no '## Run it"),
        (GOOD.replace("-var name_prefix=", "-var table_name="), "-var table_name="),
        (GOOD.replace("-var='region=", "-var 'regions="), "-var regions="),
        (GOOD.replace("-raw table_arn", "-raw table_name"), "terraform output table_name"),
        (GOOD.replace('"region": "eu', '"regoin": "eu'), "-var regoin="),
        (GOOD.replace("output -raw table_arn", "output -json arn"), "terraform output arn"),
    ],
)
def test_checker_reports_what_is_wrong(tmp_path: Path, readme: str | None, expected: str) -> None:
    problems = readme_problems(_example(tmp_path, readme))
    wanted = expected.split("|")
    assert len(problems) == len(wanted), problems
    assert all(w in p for w, p in zip(wanted, problems, strict=True)), problems


def test_var_file_is_not_a_variable(tmp_path: Path) -> None:
    readme = GOOD.replace("-var name_prefix=me", "-var-file=prod.tfvars -var name_prefix=me")
    assert readme_problems(_example(tmp_path, readme)) == []
