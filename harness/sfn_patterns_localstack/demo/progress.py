"""The demo's progress on stderr: step lines, a ticker for long waits, progress bars.

stdout carries only the summary, so ``sfn-patterns demo > summary.txt`` stays clean
while the terminal still shows what is going on.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import click

from sfn_patterns_localstack.executions import wait_stopped

EXECUTION_TIMEOUT = 300.0


class Progress:
    """Step lines, a ticker for long waits and progress bars, all on stderr.

    stdout carries only the summary, so ``sfn-patterns demo > summary.txt`` stays
    clean while the terminal still shows what is going on.
    """

    def __init__(self, interval: float = 10.0) -> None:
        self.interval = interval
        self.tty = sys.stderr.isatty()

    def step(self, message: str) -> None:
        """One ``==> message`` line."""
        click.secho(f"==> {message}", fg="cyan", err=True)

    def log(self, line: str) -> None:
        """A detail line (Terraform commands, for instance), indented under the step."""
        click.echo(f"    {line}", err=True)

    @contextmanager
    def ticking(self, label: str) -> Iterator[None]:
        """Show that a long wait is alive: a spinner on a terminal, a line every interval else."""
        stop = threading.Event()
        started = time.monotonic()

        def tick() -> None:
            spinner = "|/-\\"
            n = 0
            while not stop.wait(0.25 if self.tty else self.interval):
                elapsed = time.monotonic() - started
                if self.tty:
                    click.echo(
                        f"\r    {spinner[n % 4]} {label} {elapsed:5.0f} s", err=True, nl=False
                    )
                    n += 1
                else:
                    click.echo(f"    ... {label}: {elapsed:.0f} s", err=True)

        thread = threading.Thread(target=tick, daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()
            if self.tty:
                click.echo("\r" + " " * (len(label) + 16) + "\r", err=True, nl=False)
            self.log(f"{label}: {time.monotonic() - started:.1f} s")

    def wait_executions(
        self, sfn: Any, arns: Sequence[str], label: str, timeout: float = EXECUTION_TIMEOUT
    ) -> list[dict[str, Any]]:
        """Wait for executions to stop, with a progress bar; return their descriptions."""
        with click.progressbar(
            length=len(arns), label=f"    {label}", file=sys.stderr, show_pos=True
        ) as bar:
            done = wait_stopped(sfn, arns, timeout, on_stop=lambda _arn, _d: bar.update(1))
        for arn in arns:  # still running at the deadline: report it as such
            done.setdefault(arn, sfn.describe_execution(executionArn=arn))
        return [done[arn] for arn in arns]
