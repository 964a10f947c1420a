"""Run ``SCRIPT --help`` for several scripts at once, and report their parsers' help.

Usage: ``python help_probe.py OUT_DIR SCRIPT...``. Each script runs as ``__main__``
with ``sys.argv = [SCRIPT, "--help"]`` and the script's directory first on
``sys.path``, as ``python SCRIPT --help`` would run it, in a child process forked
from this one. For each script OUT_DIR gets ``<stem>.out``, ``<stem>.err``,
``<stem>.code`` (its exit code) and ``<stem>.json``: when it printed help through
argparse or click, what a reader of ``--help`` would miss in that parser and every
subcommand below it (a missing description, options and arguments without help
text). tests/tooling/test_script_help.py reads them.

Why fork: the benchmarks import boto3, networkx and the LocalStack harness at the
top, about a CPU-second each. The modules every script imports are imported here
once, before the forks, so each child only runs its script's own code (a script
still fails on a name it forgot to import: its own namespace starts empty).

Why read the parser objects, not the printed text: a help line is easy to mistake
for the wrapped tail of the option above it. argparse has no public list of a
parser's actions, so ``_actions`` is read (stable since Python 3.2); click's
``params`` and ``commands`` are public.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib
import json
import os
import runpy
import sys
import traceback
from pathlib import Path
from typing import Any

_printed: list[tuple[str, Any]] = []


def _argparse_gaps(parser: argparse.ArgumentParser) -> list[dict[str, object]]:
    """One entry per parser: its prog, whether it has a description, its unhelped actions."""
    entries: list[dict[str, object]] = []
    missing: list[str] = []
    for action in parser._actions:  # private: no public accessor
        if action.help == argparse.SUPPRESS:
            continue
        if isinstance(action, argparse._SubParsersAction):
            name = "{" + ",".join(action.choices) + "}"
            helped = {a.dest for a in action._choices_actions if a.help}
            missing += [f"{name} {sub}" for sub in action.choices if sub not in helped]
            for sub in action.choices.values():
                entries += _argparse_gaps(sub)
        elif not (action.help or "").strip():
            missing.append("/".join(action.option_strings) or str(action.metavar or action.dest))
    entries.insert(
        0,
        {
            "prog": parser.prog,
            "description": bool((parser.description or "").strip()),
            "missing": missing,
        },
    )
    return entries


def _click_gaps(command: Any, prog: str) -> list[dict[str, object]]:
    """The same for a click command and its subcommands (arguments carry no help in click)."""
    import click

    missing = [
        "/".join(param.opts)
        for param in command.params
        if isinstance(param, click.Option) and not param.hidden and not (param.help or "").strip()
    ]
    entries: list[dict[str, object]] = [
        {"prog": prog, "description": bool((command.help or "").strip()), "missing": missing}
    ]
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        if not sub.hidden:
            entries += _click_gaps(sub, f"{prog} {name}")
    return entries


def _record_help() -> None:
    """Make argparse and click note which parser or command printed its help."""
    print_help = argparse.ArgumentParser.print_help

    def recorded_print_help(self: argparse.ArgumentParser, file: Any = None) -> None:
        _printed.append(("argparse", self))
        print_help(self, file)

    argparse.ArgumentParser.print_help = recorded_print_help  # type: ignore[method-assign]
    try:
        import click
    except ImportError:
        return
    get_help = click.Command.get_help

    def recorded_get_help(self: Any, ctx: Any) -> str:
        _printed.append(("click", (self, ctx.command_path)))
        return get_help(self, ctx)

    click.Command.get_help = recorded_get_help  # type: ignore[method-assign]


def _preload(scripts: list[Path]) -> None:
    """Import the top-level imports of every script, once, before forking."""
    names: set[str] = set()
    for script in scripts:
        for node in ast.parse(script.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module)
    for name in sorted(names):
        with contextlib.suppress(Exception):  # the child imports it again and reports
            importlib.import_module(name)


def _run(script: Path, out_dir: Path) -> int:
    """In the child: run the script with --help, write its report, return its exit code."""
    stem = out_dir / script.stem
    for fd, suffix in ((1, ".out"), (2, ".err")):
        os.dup2(os.open(f"{stem}{suffix}", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), fd)
    sys.argv = [str(script), "--help"]
    sys.path[0] = str(script.parent)
    code: object = 0
    try:
        runpy.run_path(str(script), run_name="__main__")
    except SystemExit as exit_:
        code = exit_.code
    except BaseException as error:  # shown as the interpreter would
        traceback.print_exception(error)
        code = 1
    entries: list[dict[str, object]] = []
    if _printed:
        kind, printed = _printed[0]
        entries = _argparse_gaps(printed) if kind == "argparse" else _click_gaps(*printed)
    Path(f"{stem}.json").write_text(json.dumps({"parser": bool(_printed), "parsers": entries}))
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    return int(code or 0)


def main() -> int:
    """Fork one child per script, wait for all, write each exit code."""
    out_dir = Path(sys.argv[1])
    scripts = [Path(arg).resolve() for arg in sys.argv[2:]]
    _record_help()
    _preload(scripts)
    sys.stdout.flush()
    sys.stderr.flush()
    children = {}
    for script in scripts:
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                code = _run(script, out_dir)
            finally:
                os._exit(code)
        children[pid] = script
    for pid, script in children.items():
        _, status = os.waitpid(pid, 0)
        (out_dir / f"{script.stem}.code").write_text(str(os.waitstatus_to_exitcode(status)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
