"""Progress on stderr, so stdout stays clean for json, sarif and github output.

On a terminal a rich progress bar (a known total where the work has one); without a terminal (CI
logs, pipes) a heartbeat line at most every HEARTBEAT_S seconds while the work runs, so a job that
is minutes into a verification round is visibly alive. `-q` silences both; `-v` adds a line per file
or test run. The scan's bar refreshes by hand from its callback (no thread is alive while the scan
forks its worker processes); the verifier runs subprocesses and threads only, so its heartbeat may
come from a timer thread.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

from rich.console import Console

HEARTBEAT_S = 10.0
REFRESH_S = 0.1  # a terminal bar redraws at most this often (a warm scan reports thousands of files a second)
QUIET, NORMAL, VERBOSE = 0, 1, 2
ANALYZED = "analyzing"  # the scan phase whose files -v lists


def verbosity(quiet: bool, verbose: bool) -> int:
    return QUIET if quiet else VERBOSE if verbose else NORMAL


class Progress:
    """What a command shows while it works. `stream`: stderr; `interactive`: None asks stream.isatty()."""

    def __init__(
        self,
        level: int = NORMAL,
        stream: TextIO | None = None,
        interactive: bool | None = None,
        heartbeat_s: float = HEARTBEAT_S,
    ) -> None:
        self.level = level
        self.stream = stream if stream is not None else sys.stderr
        self.interactive = self.stream.isatty() if interactive is None else interactive
        self.heartbeat_s = heartbeat_s

    def detail(self, text: str) -> None:
        """A per-file or per-test line, shown with -v only."""
        if self.level >= VERBOSE:
            self._line(text)

    def note(self, text: str) -> None:
        """A stage line (a rewrite's round), shown unless -q."""
        if self.level >= NORMAL:
            self._line(text)

    def _detail_done(self, phase: str, item: str) -> None:
        if phase == ANALYZED:  # reading and indexing touch every file; one line per analysed file is enough
            self.detail(f"analyzed {item}")

    def _line(self, text: str) -> None:
        self.stream.write(f"porter: {text}\n")
        self.stream.flush()

    @contextmanager
    def counter(self, label: str) -> Iterator[Callable[[str, int, int, str], None]]:
        """An `update(phase, done, total, item)` callback for work that counts (the scan's files)."""
        if self.level == QUIET:
            yield lambda phase, done, total, item: None
        elif self.interactive:
            with self._bar(label) as update:
                yield update
        else:
            yield self._heartbeat_counter(label)

    @contextmanager
    def _bar(self, label: str) -> Iterator[Callable[[str, int, int, str], None]]:
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
        from rich.progress import Progress as Bar

        bar = Bar(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(file=self.stream, force_terminal=True),
            auto_refresh=False,
            transient=True,
        )
        task = bar.add_task(label, total=None)
        last = [0.0]

        def update(phase: str, done: int, total: int, item: str) -> None:
            if self.level >= VERBOSE and phase == ANALYZED:  # printed above the live bar, not through it
                bar.console.print(f"porter: analyzed {item}", markup=False, highlight=False)
            bar.update(task, description=f"{label}: {phase}", completed=done, total=total)
            now = time.monotonic()
            if now - last[0] >= REFRESH_S or done == total:
                last[0] = now
                bar.refresh()

        with bar:
            yield update

    def _heartbeat_counter(self, label: str) -> Callable[[str, int, int, str], None]:
        started = time.monotonic()
        last = [started]

        def update(phase: str, done: int, total: int, item: str) -> None:
            self._detail_done(phase, item)
            now = time.monotonic()
            if now - last[0] >= self.heartbeat_s:
                last[0] = now
                self._line(f"{label}: {phase} {done}/{total} ({now - started:.0f} s)")

        return update

    @contextmanager
    def activity(self, label: str) -> Iterator[None]:
        """Long work that reports nothing while it runs (a verification round): an elapsed-time bar on a
        terminal, else a heartbeat line every heartbeat_s seconds from a timer thread."""
        if self.level == QUIET:
            yield
            return
        if self.interactive:
            with self._spinner(label):
                yield
            return
        with self._heartbeat(label):
            yield

    @contextmanager
    def _spinner(self, label: str) -> Iterator[None]:
        from rich.progress import Progress as Bar
        from rich.progress import SpinnerColumn, TextColumn, TimeElapsedColumn

        bar = Bar(
            SpinnerColumn(),
            TextColumn(label),
            TimeElapsedColumn(),
            console=Console(file=self.stream, force_terminal=True),
            transient=True,
        )
        bar.add_task(label, total=None)
        with bar:
            yield

    @contextmanager
    def _heartbeat(self, label: str) -> Iterator[None]:
        started = time.monotonic()
        done = threading.Event()

        def beat() -> None:
            while not done.wait(self.heartbeat_s):
                self._line(f"{label}: still running ({time.monotonic() - started:.0f} s)")

        thread = threading.Thread(target=beat, name="porter-heartbeat", daemon=True)
        thread.start()
        try:
            yield
        finally:
            done.set()
            thread.join()
