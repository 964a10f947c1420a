"""No literal ``arn:aws:`` where an ARN is built: the partition comes from data.aws_partition.

A hard-coded ``arn:aws:`` works in the commercial partition and breaks the modules in
aws-cn and aws-us-gov. Terraform takes the partition from ``data.aws_partition``; the
planner/renderer receives it (``--partition``) and the runtime derives it from an
incoming ARN. This test scans what ships: the modules' ``*.tf``, the ASL templates,
the planner/renderer (cli/sfn_patterns_cli) and the runtime (lambda_src/sfn_patterns);
and the configurations that show or test the modules: the examples' and the test
fixtures' ``*.tf`` (examples/, tests/), which readers copy and which should build in
any partition like the modules do.

Allowed, because no ARN is built there: comments (HCL ``#`` ``//`` ``/* */``, Jinja
``{# #}``, Python comments and docstrings) and the example in a Terraform
``description`` or validation ``error_message``. Not scanned: the modules' own
``terraform test`` files (modules/*/tests, whose mocked values are ARNs on purpose)
and what the harness writes beside a configuration (localstack_override.tf). Anything
else that must stay goes in ALLOWED with its reason.

The same scan refuses a literal ``amazonaws.com`` (a service principal such as
``states.amazonaws.com``, or a host name) in the Terraform that ships or is applied:
the modules, the root module, the examples and the test fixtures' ``*.tf``. A service
principal is not always ``SERVICE.amazonaws.com`` (CloudWatch Logs is
``logs.amazonaws.com.cn`` in aws-cn; terraform-provider-aws
``internal/service/meta/service_principal_data_source.go`` holds the rules), so it
comes from ``data "aws_service_principal"`` (its ``name``, or its ``suffix`` for a
regional principal such as ``logs.REGION.SUFFIX``); a host name from
``data.aws_partition``'s ``dns_suffix``.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LITERAL = "arn:aws:"
PRINCIPAL_LITERAL = "amazonaws.com"
SKIP_DIRS = {".terraform", ".venv", ".build", "build", "node_modules"}

# (path relative to the repository, stripped line) -> why it must stay. Empty: every
# occurrence today is in a comment, a docstring or an example in a message.
ALLOWED: dict[tuple[str, str], str] = {}


@dataclass(frozen=True)
class Finding:
    """One literal partition in code: where, and the line."""

    path: str
    line: int
    text: str


def _hcl_findings(path: str, text: str, literal: str = LITERAL) -> list[Finding]:
    """Occurrences outside comments and outside description / error_message values."""
    findings = []
    in_block_comment = False
    heredoc_end: str | None = None  # terminator of a description/error_message heredoc
    for number, line in enumerate(text.splitlines(), start=1):
        if heredoc_end is not None:
            if line.strip() == heredoc_end:
                heredoc_end = None
            continue
        if re.match(r"\s*(description|error_message)\s*=", line):
            heredoc = re.search(r"<<-?(\w+)\s*$", line)
            if heredoc:
                heredoc_end = heredoc.group(1)
            continue
        code, in_block_comment = _hcl_code(line, in_block_comment)
        if literal in code:
            findings.append(Finding(path, number, line.strip()))
    return findings


def _hcl_code(line: str, in_block_comment: bool) -> tuple[str, bool]:
    """The part of one HCL line that is not comment (strings are kept)."""
    code = []
    i, in_string = 0, False
    while i < len(line):
        if in_block_comment:
            end = line.find("*/", i)
            if end < 0:
                return "".join(code), True
            i, in_block_comment = end + 2, False
            continue
        char = line[i]
        if in_string:
            code.append(char)
            if char == "\\":
                code.append(line[i + 1 : i + 2])
                i += 2
                continue
            in_string = char != '"'
        elif char == '"':
            in_string = True
            code.append(char)
        elif char == "#" or line.startswith("//", i):
            break
        elif line.startswith("/*", i):
            in_block_comment = True
            i += 2
            continue
        else:
            code.append(char)
        i += 1
    return "".join(code), in_block_comment


def _template_findings(path: str, text: str) -> list[Finding]:
    """Occurrences in a template outside Jinja comments ({# ... #})."""
    code = re.sub(r"\{#.*?#\}", lambda m: "\n" * m.group().count("\n"), text, flags=re.S)
    return [
        Finding(path, number, line.strip())
        for number, line in enumerate(code.splitlines(), start=1)
        if LITERAL in line
    ]


def _python_findings(path: str, text: str) -> list[Finding]:
    """Occurrences in Python string literals other than docstrings (comments are skipped)."""
    docstrings = set()
    for node in ast.walk(ast.parse(text)):
        docstring_owner = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
        if isinstance(node, docstring_owner) and ast.get_docstring(node, clean=False) is not None:
            docstrings.add(node.body[0].lineno)
    lines = text.splitlines()
    # Python 3.12+ splits f-strings into parts; their literal text is FSTRING_MIDDLE.
    strings = {tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}
    findings = []
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type in strings and LITERAL in token.string and token.start[0] not in docstrings:
            findings.append(Finding(path, token.start[0], lines[token.start[0] - 1].strip()))
    return findings


def _findings(path: Path) -> list[Finding]:
    relative = path.relative_to(REPO).as_posix()
    text = path.read_text()
    if path.suffix == ".tf":
        found = _hcl_findings(relative, text)
    elif path.suffix == ".py":
        found = _python_findings(relative, text)
    else:
        found = _template_findings(relative, text)
    return [f for f in found if (f.path, f.text) not in ALLOWED]


def _scanned_files() -> list[Path]:
    files = [
        *(p for p in (REPO / "modules").rglob("*.tf") if "tests" not in p.parts),
        *(REPO / "examples").rglob("*.tf"),
        *(REPO / "tests").rglob("*.tf"),
        *(p for p in (REPO / "templates").rglob("*") if p.is_file()),
        *(REPO / "cli" / "sfn_patterns_cli").rglob("*.py"),
        *(REPO / "lambda_src" / "sfn_patterns").rglob("*.py"),
    ]
    # cli/sfn_patterns_cli/templates links to templates/: scan each file once.
    unique = {
        p.resolve(): p
        for p in files
        if ".terraform" not in p.parts and p.name != "localstack_override.tf"
    }
    return sorted(unique.values())


def test_no_literal_partition_where_arns_are_built() -> None:
    files = _scanned_files()
    names = {p.relative_to(REPO).as_posix() for p in files}
    # The scan really covers what ships (so it cannot pass by finding nothing).
    assert {
        "modules/dag-aggregate/main.tf",
        "modules/job-poller/main.tf",
        "templates/job-poller/poll-retry.asl.json.tftpl",
        "templates/dag-aggregate/task.asl.json.j2",
        "cli/sfn_patterns_cli/dag_aggregate/render.py",
        "examples/job-poller/main.tf",
        "tests/job_poller/two_pollers/main.tf",
    } <= names
    assert any(n.startswith("lambda_src/sfn_patterns/") for n in names)
    findings = [finding for path in files for finding in _findings(path)]
    assert findings == [], "take the partition from data.aws_partition / --partition:\n" + (
        "\n".join(f"{f.path}:{f.line}: {f.text}" for f in findings)
    )


def test_allow_list_entries_still_exist() -> None:
    """A stale allow-list entry would hide nothing but mislead: each must still match."""
    for (relative, line), reason in ALLOWED.items():
        assert reason, relative
        assert line in (line.strip() for line in (REPO / relative).read_text().splitlines())


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("templates/x/t.asl.json.tftpl", '{"Resource": "arn:aws:states:::lambda:invoke"}'),
        ("templates/x/t.asl.json.j2", '{# ok #}\n"Resource": "arn:aws:states:::lambda:invoke"'),
        ("modules/x/main.tf", 'locals {\n  arn = "arn:aws:states:::lambda:invoke" # x\n}'),
        ("modules/x/main.tf", '/* a\n b */ resources = ["arn:aws:s3:::b"]'),
        ("modules/x/main.tf", 'x = "# not a comment arn:aws:s3:::b"'),
        ("cli/x.py", 'RESOURCE = f"arn:aws:states:::{service}"\n'),
        ("cli/x.py", 'def f():\n    """Doc."""\n    return "arn:aws:s3:::b"\n'),
    ],
)
def test_a_literal_partition_in_code_is_found(name: str, text: str) -> None:
    suffix = Path(name).suffix
    finder = {".tf": _hcl_findings, ".py": _python_findings}.get(suffix, _template_findings)
    assert len(finder(name, text)) == 1


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("templates/x/t.asl.json.j2", '{# e.g. "arn:aws:states:::lambda:invoke" #}\n{}'),
        ("templates/x/t.asl.json.tftpl", '{"Resource": "arn:${partition}:states:::x"}'),
        ("modules/x/main.tf", '# arn:aws:states:::lambda:invoke\nx = "arn:${p}:s3:::b"'),
        ("modules/x/main.tf", "x = 1 // see arn:aws:s3:::b\n/* arn:aws:s3:::b */"),
        ("modules/x/variables.tf", '    error_message = "an ARN (arn:aws:iam::ACCOUNT:role/N)"'),
        ("modules/x/variables.tf", "  description = <<-EOT\n  e.g. arn:aws:s3:::b\n  EOT\n"),
        ("cli/x.py", '"""Module doc: arn:aws:s3:::b."""\n# arn:aws:s3:::b\nX = 1\n'),
        ("cli/x.py", 'def f():\n    """Doc: arn:aws:s3:::b."""\n'),
        ("cli/x.py", 'X = "arn:aws-cn:s3:::b"\n'),
    ],
)
def test_comments_docs_and_examples_are_allowed(name: str, text: str) -> None:
    suffix = Path(name).suffix
    finder = {".tf": _hcl_findings, ".py": _python_findings}.get(suffix, _template_findings)
    assert finder(name, text) == []


# --- service principals ------------------------------------------------------------


def _terraform_files() -> list[Path]:
    """Every *.tf that ships or is applied: root, modules, examples, test fixtures."""
    files = [
        *REPO.glob("*.tf"),
        *(REPO / "modules").rglob("*.tf"),
        *(REPO / "examples").rglob("*.tf"),
        *(REPO / "tests").rglob("*.tf"),
    ]
    return sorted(p for p in files if not SKIP_DIRS.intersection(p.relative_to(REPO).parts))


def test_no_literal_service_principal_in_terraform() -> None:
    files = _terraform_files()
    names = {p.relative_to(REPO).as_posix() for p in files}
    # The scan covers every file that held a literal principal before (so it cannot
    # pass by finding nothing).
    assert {
        "modules/state-machine/main.tf",
        "modules/lambda-function/main.tf",
        "modules/sqs-throttle/main.tf",
        "modules/semaphore/main.tf",
        "modules/event-completion/main.tf",
        "modules/dag-aggregate/dependency.tf",
        "examples/complete/main.tf",
        "examples/status-table/main.tf",
        "tests/consumer/team_repo/main.tf",
        "main.tf",
    } <= names
    findings = [
        finding
        for path in files
        for finding in _hcl_findings(
            path.relative_to(REPO).as_posix(), path.read_text(), PRINCIPAL_LITERAL
        )
    ]
    assert findings == [], 'take service principals from data "aws_service_principal":\n' + (
        "\n".join(f"{f.path}:{f.line}: {f.text}" for f in findings)
    )


@pytest.mark.parametrize(
    "text",
    [
        'identifiers = ["states.amazonaws.com"]',
        'principal     = "events.amazonaws.com"',
        'identifiers = ["logs.${local.region}.amazonaws.com"]',
    ],
)
def test_a_literal_principal_is_found(text: str) -> None:
    assert len(_hcl_findings("modules/x/main.tf", text, PRINCIPAL_LITERAL)) == 1


@pytest.mark.parametrize(
    "text",
    [
        "identifiers = [data.aws_service_principal.states.name]",
        'identifiers = ["logs.${local.region}.${data.aws_service_principal.logs.suffix}"]',
        "# logs.amazonaws.com.cn in aws-cn",
        '  description = "Trusted by states.amazonaws.com."',
    ],
)
def test_principals_from_the_provider_and_comments_are_allowed(text: str) -> None:
    assert _hcl_findings("modules/x/main.tf", text, PRINCIPAL_LITERAL) == []
