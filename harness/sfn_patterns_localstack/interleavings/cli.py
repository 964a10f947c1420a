"""``python -m sfn_patterns_localstack.interleavings``: explore, replay, and list mutants.

Why a command: a failure found anywhere (a test, a long exploration on a spare machine)
prints a schedule, and this is the one command that replays it, step by step, with the
store's changes and each actor's outcomes; ``explore`` runs the strategies with budgets
bigger than the test suite's.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from sfn_patterns_localstack.interleavings.explorer import Explorer, Failure
from sfn_patterns_localstack.interleavings.protocol import Protocol
from sfn_patterns_localstack.interleavings.protocols import PROTOCOLS
from sfn_patterns_localstack.interleavings.scheduler import SchedulerError
from sfn_patterns_localstack.interleavings.steps import format_schedule, parse_schedule
from sfn_patterns_localstack.interleavings.strategies import Budget, DepthFirst, RandomWalk, Replay

_EPILOG = """\
schedule steps (replay --schedule, and what failures print):
  N      actor N sends the call it is paused at and runs to its next pause
  NL     the call takes effect, its answer is lost (ReadTimeoutError)
  NT     the call is throttled (ProvisionedThroughputExceededException), not applied
  NX     actor N crashes there (its thread runs no further code)
  +      the clock moves on by one tick (the protocol's lease)
  N+ NL+ NT+  as N, NL, NT, then the clock moves on before actor N goes on
After the given steps, a run is completed fairly and without faults until quiescence.
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m sfn_patterns_localstack.interleavings",
        description=(
            "Explore the interleavings of a protocol's real runtime code: several actors "
            "against moto's DynamoDB, paused at every AWS call, with crashes, lost answers, "
            "throttles and clock ticks as schedule steps; invariants checked after every step."
        ),
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    explore = commands.add_parser(
        "explore",
        help="run a strategy until a failure, its end, or the budget",
        description="Run a strategy; print each failure's schedule and replay command.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=_EPILOG,
    )
    _common(explore)
    explore.add_argument(
        "--strategy",
        choices=("random", "dfs"),
        default="random",
        help="random: seeded random walks; dfs: every schedule up to --depth (default random)",
    )
    explore.add_argument("--seed", type=int, default=0, help="random walk seed (default 0)")
    explore.add_argument(
        "--runs", type=int, default=None, help="stop after this many runs (default: no limit)"
    )
    explore.add_argument(
        "--cpu-seconds",
        type=float,
        default=60.0,
        help="stop after this much CPU time (default 60)",
    )
    explore.add_argument(
        "--depth",
        type=int,
        default=None,
        help="steps explored before a run is completed (default: random 16, dfs 8)",
    )
    budget = Budget()
    explore.add_argument(
        "--ticks", type=int, default=budget.ticks, help="clock ticks per explored prefix"
    )
    explore.add_argument(
        "--crashes", type=int, default=budget.crashes, help="crashes per explored prefix"
    )
    explore.add_argument(
        "--lost", type=int, default=budget.lost, help="lost answers per explored prefix"
    )
    explore.add_argument(
        "--throttles", type=int, default=budget.throttles, help="throttles per explored prefix"
    )
    explore.add_argument(
        "--no-reduce",
        dest="reduce",
        action="store_false",
        help="dfs: explore reorderings of independent steps too (no sleep sets)",
    )
    explore.add_argument("--all", action="store_true", help="keep going after the first failure")

    replay = commands.add_parser(
        "replay",
        help="run one schedule and print its trace",
        description="Replay one schedule step by step; exit 1 if an invariant breaks.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=_EPILOG,
    )
    _common(replay)
    replay.add_argument(
        "--schedule", required=True, help="the steps, e.g. '0 0+ 1 1L 0' (see below)"
    )
    replay.add_argument("--log", action="store_true", help="also show the runtime's own log lines")

    mutants = commands.add_parser(
        "mutants",
        help="list a protocol's mutants",
        description="List the named mutants a protocol's runtime can be run with (--mutant).",
    )
    mutants.add_argument(
        "--protocol", choices=sorted(PROTOCOLS), required=True, help="the protocol"
    )
    return parser


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--protocol", choices=sorted(PROTOCOLS), required=True, help="the protocol to run"
    )
    parser.add_argument(
        "--mutant", default=None, help="apply this named mistake to the runtime (see mutants)"
    )
    for protocol in PROTOCOLS.values():
        protocol.add_arguments(parser)


def _protocol(args: argparse.Namespace) -> Protocol:
    try:
        return PROTOCOLS[args.protocol].from_arguments(args)
    except ValueError as error:  # a scenario option out of range: say which, and stop
        print(f"error: {error}", file=sys.stderr)
        raise SystemExit(2) from None


def _explore(args: argparse.Namespace) -> int:
    protocol = _protocol(args)
    budget = Budget(args.ticks, args.crashes, args.lost, args.throttles)
    strategy: RandomWalk | DepthFirst
    if args.strategy == "random":
        strategy = RandomWalk(args.seed, depth=args.depth or 16, budget=budget)
    else:
        strategy = DepthFirst(depth=args.depth or 8, budget=budget, reduce=args.reduce)
    with Explorer(protocol, mutant=args.mutant) as explorer:
        report = explorer.explore(
            strategy, max_runs=args.runs, cpu_seconds=args.cpu_seconds, stop_at_first=not args.all
        )
    for failure in report.failures:
        print(failure, end="\n\n")
    print(f"{protocol.name}: {report.summary()}")
    return 1 if report.failures else 0


def _replay(args: argparse.Namespace) -> int:
    protocol = _protocol(args)
    try:
        steps = parse_schedule(args.schedule)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    with Explorer(protocol, mutant=args.mutant, quiet=not args.log) as explorer:
        try:
            result = explorer.run(Replay(steps), trace=True)
        except SchedulerError as error:  # a step that is not possible where it is given
            print(f"error: {error}", file=sys.stderr)
            return 2
    print("\n".join(result.trace))
    print(f"schedule: {format_schedule(result.schedule)}")
    if result.failed:
        print()
        print(
            Failure(
                protocol.name,
                protocol.arguments(),
                args.mutant,
                "replay",
                result.schedule,
                result.violations,
            )
        )
        return 1
    ending = "quiescent" if result.quiescent else "stopped"
    print(f"{ending}; no invariant broken")
    return 0


def _mutants(args: argparse.Namespace) -> int:
    for mutant in PROTOCOLS[args.protocol]().mutants().values():
        print(f"{mutant.name}\n    {mutant.description}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` and run the command; the exit code (1: an invariant broke)."""
    args = _parser().parse_args(argv)
    command = {"explore": _explore, "replay": _replay, "mutants": _mutants}[args.command]
    return command(args)
