#!/usr/bin/env python3
"""Trim a terraform-provider-aws source tree to the service packages this project uses.

Why: the full AWS provider compiles about 260 service packages and 400 SDK clients
(about 29 minutes and 9 GiB on 2 cores). The modules, examples and tests here use a
dozen services. The list is never written by hand: it is generated from every
``resource``/``data``/``ephemeral`` block type in the repository's ``*.tf`` files and
mapped to provider packages through each package's generated
``service_package_gen.go`` (its ``TypeName:`` entries), so it cannot drift from
the code. When a type maps to no package the answer is "build everything"
(``full``), never a provider that lacks a type.

Every build, trimmed or full, also gets one addition (``patch_poll_cap``): an
opt-in cap on the provider's pauses between consistency checks, which the
LocalStack harness turns on (see ``POLL_CAP_GO``). Unset, the provider is upstream's.

Usage:
  aws_provider_trim.py types ROOT                  print the aws_* types ROOT uses
  aws_provider_trim.py plan [--full] ROOT SRC      print the packages to build, or "full"
  aws_provider_trim.py apply [--full] ROOT SRC DEST
                                                   copy SRC to DEST trimmed (or whole, when
                                                   the plan is "full"), add the poll cap;
                                                   prints the plan

Standard library only: it runs before any virtualenv exists.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

BLOCK = re.compile(r'^\s*(?:resource|data|ephemeral)\s+"(aws_[a-z0-9_]+)"', re.MULTILINE)
TYPE_NAME = re.compile(r'TypeName:\s*"(aws_[a-z0-9_]+)"')
SKIP_DIRS = {".terraform", ".venv", ".git", "build", ".build", "node_modules"}
# Packages every build keeps whatever the configurations use: the provider's own
# data sources for partitions, regions and ARNs live in "meta", and the provider
# calls STS itself to find the account.
ALWAYS = ("meta", "sts")
SERVICE_PACKAGES_GEN = "internal/provider/sdkv2/service_packages_gen.go"
AWSCLIENT_GEN = "internal/conns/awsclient_gen.go"
SERVICE_IMPORT = "github.com/hashicorp/terraform-provider-aws/internal/service/"
# Only what `go build .` reads: not the 100+ MB of website and docs.
COPY = ("go.mod", "go.sum", "main.go", "internal", "names", "version")

# The one source change every build gets. The provider waits out AWS's eventual
# consistency with fixed pauses between repeated reads: 10 s and then 10 matching
# reads 5 s apart for an S3 lifecycle configuration, 6 reads 5 s apart for a new SQS
# queue, 5 s before the first read of a new Lambda function or DynamoDB table. On
# LocalStack, which is consistent at once, those pauses were most of an apply (the
# job-poller example: 84 s, 40 of them on one lifecycle configuration). Every such
# pause goes through backoff.Loop.sleep; the patch lets an environment variable cap
# it. The same checks still run, as many times and in the same order.
POLL_CAP_ENV = "SFN_PATTERNS_PROVIDER_MAX_POLL_DELAY"
POLL_CAP_ID = "pollcap1"  # part of the build's cache key: a new patch rebuilds
BACKOFF_GO = "internal/backoff/backoff.go"
SLEEP_ANCHOR = "func (r *Loop) sleep(ctx context.Context, d time.Duration) {\n"
POLL_CAP_FILE = "internal/backoff/sfn_patterns_poll_cap.go"
POLL_CAP_GO = f"""// Added by sfn-patterns' build (scripts/aws_provider_trim.py): not upstream.

package backoff

import (
\t"os"
\t"time"
)

// maxPollDelay caps every pause of a Loop when {POLL_CAP_ENV} holds a
// positive Go duration ("200ms"). The sfn-patterns LocalStack harness sets it:
// LocalStack is consistent at once, so AWS-sized pauses between consistency checks
// only slow the tests. Unset or invalid, pauses are upstream's.
var maxPollDelay = func() time.Duration {{
\td, err := time.ParseDuration(os.Getenv("{POLL_CAP_ENV}"))
\tif err != nil || d <= 0 {{
\t\treturn 0
\t}}
\treturn d
}}()

func capPollDelay(d time.Duration) time.Duration {{
\tif maxPollDelay > 0 && d > maxPollDelay {{
\t\treturn maxPollDelay
\t}}
\treturn d
}}
"""


def used_types(root: Path) -> set[str]:
    """Every aws_* resource, data source and ephemeral type in ROOT's *.tf files.

    Skipped directories are pruned, not walked and filtered: a checkout's .venv alone
    holds tens of thousands of files, and every bootstrap asks (2.7 s of the
    bootstrap's wall clock on a loaded machine, 0.1 s pruned).
    """
    found: set[str] = set()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            if name.endswith(".tf"):
                text = (Path(dirpath) / name).read_text(errors="replace")
                found.update(BLOCK.findall(text))
    return found


def type_index(src: Path) -> dict[str, str]:
    """Map each type the provider defines to its service package name."""
    index: dict[str, str] = {}
    for gen in sorted((src / "internal/service").glob("*/service_package_gen.go")):
        for name in TYPE_NAME.findall(gen.read_text()):
            index.setdefault(name, gen.parent.name)
    return index


@dataclass(frozen=True)
class Plan:
    """What to build: ``packages`` (sorted), or everything when ``full``."""

    packages: tuple[str, ...]
    full: bool
    reason: str

    def digest(self) -> str:
        """The build's cache key: ``full-<patch>``, or a hash of the packages and the patch."""
        if self.full:
            return f"full-{POLL_CAP_ID}"
        key = ",".join((*self.packages, POLL_CAP_ID))
        return hashlib.sha256(key.encode()).hexdigest()[:12]

    def describe(self) -> str:
        """One line for the bootstrap's progress output."""
        if self.full:
            return f"full build ({self.reason})"
        return f"{len(self.packages)} service packages: {' '.join(self.packages)}"


def plan(root: Path, src: Path, full: bool = False) -> Plan:
    """The service packages ROOT's configurations need, or a full build when one is unknown."""
    if full:
        return Plan((), True, "asked for")
    types = used_types(root)
    index = type_index(src)
    missing = sorted(t for t in types if t not in index)
    if missing:
        return Plan((), True, f"no service package defines {', '.join(missing)}")
    packages = sorted({index[t] for t in types} | set(ALWAYS))
    return Plan(tuple(packages), False, f"{len(types)} types in use")


def trim_service_packages(text: str, keep: set[str]) -> str:
    """Keep only ``keep``'s imports and ``X.ServicePackage(ctx)`` lines."""
    out = []
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if stripped.startswith(f'"{SERVICE_IMPORT}'):
            package = stripped.strip('"').rsplit("/", 1)[-1]
        elif stripped.endswith(".ServicePackage(ctx),"):
            package = stripped.split(".", 1)[0]
        else:
            package = None
        if package is None or package in keep:
            out.append(line)
    return "".join(out)


CLIENT_FUNC = re.compile(
    r"^func \(c \*AWSClient\) (\w+)\(ctx context\.Context\) \*(\w+)\.Client \{\n.*?^\}\n\n?",
    re.MULTILINE | re.DOTALL,
)
IMPORT_LINE = re.compile(r'^\t(?:(\w+) )?"(github\.com/aws/aws-sdk-go-v2/service/[^"]+)"\n', re.M)


def trim_awsclient(text: str, used_methods: set[str]) -> str:
    """Drop the AWSClient accessors nobody calls, and the SDK imports only they used.

    Why: each accessor imports one SDK client package, and those packages are about
    half of the provider's compile time.
    """
    text = CLIENT_FUNC.sub(lambda m: m.group(0) if m.group(1) in used_methods else "", text)
    head, _, body = text.partition("\n)\n")

    def keep_import(m: re.Match) -> str:
        ident = m.group(1) or m.group(2).rsplit("/", 1)[-1]
        return m.group(0) if re.search(rf"\b{ident}\.", body) else ""

    return IMPORT_LINE.sub(keep_import, head) + "\n)\n" + body


def called_accessors(dest: Path, accessors: set[str]) -> set[str]:
    """The AWSClient accessors that the packages ``go build .`` compiles refer to."""
    proc = subprocess.run(
        ["go", "list", "-deps", "-f", '{{.Dir}}|{{join .GoFiles ","}}', "."],
        cwd=dest,
        capture_output=True,
        text=True,
        check=True,
    )
    pattern = re.compile(r"\.(" + "|".join(sorted(accessors)) + r")\(")
    used: set[str] = set()
    for row in proc.stdout.splitlines():
        directory, _, files = row.partition("|")
        if not directory.startswith(str(dest)) or not files:
            continue
        for name in files.split(","):
            path = Path(directory, name)
            if path == dest / AWSCLIENT_GEN:
                continue
            used.update(pattern.findall(path.read_text()))
    return used


def patch_poll_cap(dest: Path) -> None:
    """Add the opt-in pause cap (see ``POLL_CAP_GO``) to the provider source in DEST.

    Fails, naming the file, when upstream's ``Loop.sleep`` no longer looks as
    expected: a build that silently lost the cap would only be slower, so say so.
    """
    path = dest / BACKOFF_GO
    text = path.read_text()
    if text.count(SLEEP_ANCHOR) != 1:
        raise SystemExit(
            f"{path}: expected one `{SLEEP_ANCHOR.strip()}`; the provider source changed, "
            "update patch_poll_cap in scripts/aws_provider_trim.py"
        )
    path.write_text(text.replace(SLEEP_ANCHOR, SLEEP_ANCHOR + "\td = capPollDelay(d)\n"))
    (dest / POLL_CAP_FILE).write_text(POLL_CAP_GO)


def apply(root: Path, src: Path, dest: Path, full: bool = False) -> Plan:
    """Copy SRC to DEST (writable), trimmed to ROOT's services unless the plan is full."""
    the_plan = plan(root, src, full)
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for name in COPY:
        source = src / name
        if source.is_dir():
            shutil.copytree(source, dest / name, copy_function=shutil.copy)
        else:
            shutil.copy(source, dest / name)
    for path in dest.rglob("*"):  # the module cache is read-only; the copy must not be
        path.chmod(0o755 if path.is_dir() else 0o644)
    patch_poll_cap(dest)
    if the_plan.full:
        return the_plan
    keep = set(the_plan.packages)
    gen = dest / SERVICE_PACKAGES_GEN
    gen.write_text(trim_service_packages(gen.read_text(), keep))
    awsclient = dest / AWSCLIENT_GEN
    text = awsclient.read_text()
    accessors = {m.group(1) for m in CLIENT_FUNC.finditer(text)}
    awsclient.write_text(trim_awsclient(text, called_accessors(dest, accessors)))
    return the_plan


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    root_help = "the repository whose *.tf files are scanned"
    src_help = "a terraform-provider-aws source tree"
    commands = {
        "types": "print the aws_* types the configurations use",
        "plan": "print the service packages to build, or 'full'",
        "apply": "write a trimmed copy of the provider source (or a whole one when the plan "
        "is 'full'), with the poll cap added; print the plan",
    }
    p_types, p_plan, p_apply = (
        sub.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".")
        for name, text in commands.items()
    )
    p_types.add_argument("root", type=Path, help=root_help)
    p_plan.add_argument("root", type=Path, help=root_help)
    p_plan.add_argument("src", type=Path, help=src_help)
    p_plan.add_argument("--digest", action="store_true", help="print only the cache key")
    p_plan.add_argument("--full", action="store_true", help="every service package")
    p_apply.add_argument("root", type=Path, help=root_help)
    p_apply.add_argument("src", type=Path, help=src_help)
    p_apply.add_argument("dest", type=Path, help="where the trimmed copy is written")
    p_apply.add_argument("--full", action="store_true", help="every service package")
    args = parser.parse_args(argv)
    if args.command == "types":
        print("\n".join(sorted(used_types(args.root))))
    elif args.command == "plan":
        the_plan = plan(args.root, args.src, args.full)
        print(the_plan.digest() if args.digest else the_plan.describe())
    else:
        print(apply(args.root, args.src, args.dest, args.full).describe())
    return 0


if __name__ == "__main__":
    sys.exit(main())
