#!/usr/bin/env python3
"""How far the interleaving explorer sees: schedules, distinct states and speed per protocol.

Why: ``pytest -m interleavings`` runs a small fixed budget per protocol in ``make test``;
this explores deeply, to say what the budget covers and what a long exploration adds.
Each protocol runs its default scenario (the one the tests explore) with seeded random
walks: every schedule's prefix is drawn at random (steps, ticks, lost answers,
throttles, crashes, stops where the protocol has them) and then run to quiescence, the
invariants checked after every step, exactly as the tests do.

Printed per protocol, from one run:

* schedules explored, and how many broke an invariant (0 on the real code);
* distinct states: different contents of the store (tables, the Step Functions
  stand-in, the queue) seen after some step, over all schedules;
* steps per schedule and per CPU-second;
* faults per schedule: lost answers, throttles and crashes taken.

    .venv/bin/python scripts/bench_interleavings.py                 # 10,000 per protocol
    .venv/bin/python scripts/bench_interleavings.py --schedules 100000 --protocol semaphore
    .venv/bin/python scripts/bench_interleavings.py --smoke         # smallest (make test)

A schedule costs 0.03 to 0.2 CPU-seconds here (the smoke's own figures), so the default
takes tens of CPU-minutes per protocol; ``--protocol`` runs one at a time, for example
one per core.

``--smoke`` (10 schedules per protocol) keeps the script working; its figures are not
quoted. A failing schedule is printed with the command that replays it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "harness"))
sys.path.insert(0, str(REPO / "lambda_src"))

from sfn_patterns_localstack.interleavings.explorer import Explorer  # noqa: E402
from sfn_patterns_localstack.interleavings.protocol import Checker, Protocol, RunView  # noqa: E402
from sfn_patterns_localstack.interleavings.protocols import PROTOCOLS  # noqa: E402
from sfn_patterns_localstack.interleavings.steps import FAULTS  # noqa: E402
from sfn_patterns_localstack.interleavings.strategies import RandomWalk  # noqa: E402

SMOKE_SCHEDULES = 10


@dataclass
class Measured:
    """One protocol's exploration."""

    protocol: str
    schedules: int = 0
    failing: int = 0
    steps: int = 0
    faults: int = 0
    states: int = 0
    cpu_seconds: float = 0.0
    replays: list[str] = field(default_factory=list)


class _CountingStates(Checker):
    """The protocol's own checker, plus a digest of the store after every step.

    Why a wrapper: the explorer calls a checker after every step with what a checker may
    see (:class:`RunView`), so the states are counted on exactly the runs the tests make,
    without a hook in the explorer.
    """

    def __init__(self, inner: Checker, seen: set[bytes]) -> None:
        self.inner = inner
        self.seen = seen

    def after_step(self, view: RunView) -> list[str]:
        parts: list[Any] = [view.store.snapshot()]
        if view.sfn is not None:
            parts.append(view.sfn.snapshot())
        if view.queue is not None:
            parts.append(view.queue.snapshot())
        text = json.dumps(parts, sort_keys=True, default=str).encode()
        self.seen.add(hashlib.blake2b(text, digest_size=12).digest())
        return self.inner.after_step(view)

    def at_quiescence(self, view: RunView) -> list[str]:
        return self.inner.at_quiescence(view)


def explore(name: str, schedules: int, seed: int, depth: int, report_every: int) -> Measured:
    """Run ``schedules`` seeded random walks of protocol ``name``'s default scenario."""
    protocol: Protocol = PROTOCOLS[name]()
    seen: set[bytes] = set()
    make_checker = protocol.checker
    protocol.checker = lambda: _CountingStates(make_checker(), seen)  # type: ignore[method-assign]
    measured = Measured(name)
    walk = RandomWalk(seed, depth=depth)
    started = time.process_time()
    with Explorer(protocol) as explorer:
        for index, chooser in enumerate(walk.choosers()):
            if index >= schedules:
                break
            result = explorer.run(chooser)
            measured.schedules += 1
            measured.steps += len(result.schedule)
            measured.faults += sum(step.kind in FAULTS for step in result.schedule)
            if result.failed:
                measured.failing += 1
                if len(measured.replays) < 3:
                    failure = explorer.failure(walk.label(index), result)
                    measured.replays.append(str(failure))
            if report_every and measured.schedules % report_every == 0:
                spent = time.process_time() - started
                print(
                    f"[{name}] {measured.schedules:,}/{schedules:,} schedules, "
                    f"{len(seen):,} states, {spent:.0f} CPU-s",
                    file=sys.stderr,
                    flush=True,
                )
    measured.cpu_seconds = time.process_time() - started
    measured.states = len(seen)
    return measured


def table(results: list[Measured]) -> str:
    """The Markdown table of a run."""
    lines = [
        "| protocol | schedules | failing | distinct states | steps / schedule "
        "| steps / CPU-s | faults / schedule | CPU-s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for m in results:
        per = max(m.schedules, 1)
        lines.append(
            f"| {m.protocol} | {m.schedules:,} | {m.failing:,} | {m.states:,} "
            f"| {m.steps / per:.1f} | {m.steps / max(m.cpu_seconds, 1e-9):,.0f} "
            f"| {m.faults / per:.2f} | {m.cpu_seconds:,.1f} |"
        )
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    """The command line (``--help`` lists every option with its default)."""
    parser = argparse.ArgumentParser(
        description=(
            "Explore each concurrent protocol's real code with seeded random walks and print "
            "schedules explored, distinct states, steps per CPU-second and faults per schedule."
        )
    )
    parser.add_argument(
        "--protocol",
        action="append",
        choices=sorted(PROTOCOLS),
        help="explore only this protocol (repeatable; default: every one)",
    )
    parser.add_argument(
        "--schedules",
        type=int,
        default=10_000,
        help="schedules per protocol (default 10,000)",
    )
    parser.add_argument("--seed", type=int, default=0, help="the random walks' seed (default 0)")
    parser.add_argument(
        "--depth",
        type=int,
        default=16,
        help="steps drawn at random before a schedule is run to its end (default 16)",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help=f"{SMOKE_SCHEDULES} schedules per protocol (make test); its figures are not quoted",
    )
    parser.add_argument("--json", type=Path, help="also write the measurements to this file")
    parser.add_argument(
        "--from-json", type=Path, help="print the table of a saved run (explores nothing)"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Explore, print the table; exit 1 if any schedule broke an invariant."""
    args = build_parser().parse_args(argv)
    if args.from_json is not None:
        saved = json.loads(args.from_json.read_text())
        results = [Measured(**{k: v for k, v in m.items()}) for m in saved["protocols"]]
        print(saved["label"])
        print(table(results))
        return 0
    if args.schedules < 1:
        raise SystemExit("--schedules must be at least 1")
    schedules = SMOKE_SCHEDULES if args.smoke else args.schedules
    names = args.protocol or sorted(PROTOCOLS)
    every = 0 if args.smoke else max(schedules // 20, 1)
    started = time.monotonic()
    results = [explore(name, schedules, args.seed, args.depth, every) for name in names]
    label = (
        f"seeded random walks (seed {args.seed}, depth {args.depth}), each protocol's default "
        f"scenario; {time.monotonic() - started:,.0f} s wall, one process"
    )
    print(label)
    print(table(results))
    for m in results:
        for replay in m.replays:
            print(f"\n{replay}")
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps({"label": label, "protocols": [asdict(m) for m in results]}, indent=2)
        )
    return 1 if any(m.failing for m in results) else 0


if __name__ == "__main__":
    sys.exit(main())
