"""CPU seconds per test file, measured over each worker's whole process tree.

Why: `make test` runs on two cores, so what bounds a warm run is CPU, not the wall
time a file spends waiting for an execution. A file that sleeps 60 s costs nothing;
a file that plans Terraform for 20 s costs 20 s of a core shared by all the workers.
``--durations`` and ``build/test-durations.json`` only show wall time, so every
addition's real cost was guessed. This plugin records, per file, the CPU its worker
and everything under it used (the in-process LocalStack, its Lambda fork servers and
workers, Terraform, subprocesses) and writes ``build/test-cpu.json`` sorted by cost.

How: at the start and end of each file, the worker sums ``utime + stime`` of every
live process in its tree, plus ``cutime + cstime`` (children each process has already
reaped), from ``/proc``. The difference is the file's CPU. LocalStack is shared by a
worker's files, so its background work lands on whichever file is running, which is
the file that caused it in all but a few seconds at the edges.

A process that leaves the tree while its parent is gone too was orphaned, not reaped
(LocalStack stopped: its Lambda fork servers are re-parented to init), so no
``cutime`` in the tree will ever hold its CPU. Its last sample is kept; without that,
a file that stopped a LocalStack was charged a negative figure.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from . import scheduling

OUT = Path(__file__).resolve().parents[1] / "build" / "test-cpu.json"
TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat(pid: int) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name may hold spaces and parentheses: split after its last ')'.
    return raw[raw.rindex(")") + 2 :].split()


Sample = dict[int, tuple[int, int]]
"""A tree sample: pid -> (parent pid, CPU ticks including reaped children)."""


def tree_sample(root: int) -> Sample:
    """``root`` and every process under it, each with its parent and its CPU ticks."""
    children: dict[int, list[int]] = {}
    procs: Sample = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        fields = _stat(int(entry.name))
        if fields is None:
            continue
        pid = int(entry.name)
        # After the name: state(0) ppid(1) ... utime(11) stime(12) cutime(13) cstime(14).
        children.setdefault(int(fields[1]), []).append(pid)
        procs[pid] = (int(fields[1]), sum(int(f) for f in fields[11:15]))
    tree: Sample = {}
    stack = [root]
    while stack:
        pid = stack.pop()
        if pid in procs:
            tree[pid] = procs[pid]
        stack.extend(children.get(pid, ()))
    return tree


def orphaned_ticks(before: Sample, after: Sample) -> int:
    """Ticks of the processes in ``before`` that left the tree without a parent in it.

    A process whose parent is still in the tree was reaped by it (or will be: a
    zombie stays in ``/proc``), and the parent's ``cutime`` takes its CPU over. One
    whose parent left as well was orphaned: its CPU would otherwise vanish.
    """
    return sum(
        ticks for pid, (ppid, ticks) in before.items() if pid not in after and ppid not in after
    )


class CpuAccount:
    """Charges each test file the CPU its worker's process tree used while it ran."""

    def __init__(self) -> None:
        self.current: str | None = None
        self.started = 0.0
        self.seconds: dict[str, float] = {}
        self.last: Sample = {}
        self.orphaned = 0  # ticks of processes that left the tree unreaped

    def total(self) -> float:
        """The tree's CPU so far, orphaned processes' last samples included."""
        sample = tree_sample(os.getpid())
        self.orphaned += orphaned_ticks(self.last, sample)
        self.last = sample
        return (sum(ticks for _, ticks in sample.values()) + self.orphaned) / TICKS

    def _close(self) -> None:
        if self.current is not None:
            used = self.total() - self.started
            self.seconds[self.current] = self.seconds.get(self.current, 0.0) + used
            self.current = None

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> None:
        path = scheduling.file_of(item.nodeid)
        if path != self.current:
            self._close()
            self.current = path
            self.started = self.total()

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self._close()
        if not self.seconds:
            return
        worker = getattr(session.config, "workerinput", {}).get("workerid", "main")
        part = OUT.with_name(f"test-cpu.{worker}.json")
        part.parent.mkdir(parents=True, exist_ok=True)
        part.write_text(json.dumps(self.seconds))


def merge(out: Path = OUT) -> dict[str, float]:
    """Fold the workers' parts into ``build/test-cpu.json`` (most expensive first)."""
    merged: dict[str, float] = {}
    for part in sorted(out.parent.glob("test-cpu.*.json")):
        for path, seconds in json.loads(part.read_text()).items():
            merged[path] = merged.get(path, 0.0) + seconds
        part.unlink()
    if merged:
        ordered = dict(sorted(((p, round(s, 1)) for p, s in merged.items()), key=lambda x: -x[1]))
        out.write_text(json.dumps(ordered, indent=1) + "\n")
    return merged


def configure(config: pytest.Config) -> None:
    """Register the account on every process that runs tests (workers, or a lone run)."""
    if not Path("/proc/self/stat").exists():
        return
    if not hasattr(config, "workerinput"):  # the controller, or a run without xdist
        for stale in OUT.parent.glob("test-cpu.*.json"):
            stale.unlink()
    config.pluginmanager.register(CpuAccount(), "sfnp-cpu-account")
