"""Progress on stderr, so stdout stays clean for json, sarif and github output.

On a terminal a rich progress bar (a known total where the work has one); without a terminal (CI
logs, pipes) a heartbeat line at most every HEARTBEAT_S seconds while the work runs, so a job that
is minutes into a verification round is visibly alive. `-q` silences both; `-v` adds a line per file,
or per test run and kernel compile as each finishes. The scan's bar refreshes by hand from its
callback (no thread is alive while the scan forks its worker processes); the verifier runs
subprocesses and threads only, so its bar keeps its own clock and its heartbeat comes from a timer
thread, naming the step under way and done/total (test runs and compiles; bisection adds runs).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, TextIO

from rich.console import Console

from porter.records import COMPILED, TESTED

if TYPE_CHECKING:
    from rich.progress import Progress as RichProgress

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
        self._lock = threading.Lock()  # the heartbeat thread and the verifier's callback share the stream

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
        self._write(f"porter: {text}")

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

    def _new_bar(self, auto_refresh: bool) -> RichProgress:
        """A transient rich bar with done/total and elapsed time on this reporter's stream."""
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
        from rich.progress import Progress as Bar

        return Bar(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(file=self.stream, force_terminal=True),
            auto_refresh=auto_refresh,
            transient=True,
        )

    @contextmanager
    def _bar(self, label: str) -> Iterator[Callable[[str, int, int, str], None]]:
        # The scan redraws itself at most every REFRESH_S: thousands of files would flood a slow terminal.
        bar = self._new_bar(auto_refresh=False)
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
    def steps(self, label: str) -> Iterator[Callable[[str, int, int, str], None]]:
        """An `update(phase, done, total, item)` callback for the verifier (porter.records.ProgressCallback):
        a bar with done/total on a terminal that keeps its clock running between calls, else a heartbeat
        line every heartbeat_s seconds from a timer thread naming the step and done/total; -v prints each
        test run and compile as it finishes."""
        if self.level == QUIET:
            yield lambda phase, done, total, item: None
        elif self.interactive:
            with self._steps_bar(label) as update:
                yield update
        else:
            with self._steps_heartbeat(label) as update:
                yield update

    def _finished(self, phase: str, item: str, show: Callable[[str], None]) -> None:
        if self.level >= VERBOSE and phase in (TESTED, COMPILED):
            show(f"porter: {phase} {item}")

    @contextmanager
    def _steps_bar(self, label: str) -> Iterator[Callable[[str, int, int, str], None]]:
        # The verifier's steps are few and slow: the bar's own refresh keeps its clock running between them.
        bar = self._new_bar(auto_refresh=True)
        task = bar.add_task(label, total=None)

        def update(phase: str, done: int, total: int, item: str) -> None:
            self._finished(phase, item, lambda text: bar.console.print(text, markup=False, highlight=False))
            bar.update(task, description=f"{label}: {phase} {item}", completed=done, total=total)
            bar.refresh()

        with bar:
            yield update

    @contextmanager
    def _steps_heartbeat(self, label: str) -> Iterator[Callable[[str, int, int, str], None]]:
        started = time.monotonic()
        state = ["starting", 0, 0, ""]
        lock = threading.Lock()
        stop = threading.Event()

        def update(phase: str, done: int, total: int, item: str) -> None:
            self._finished(phase, item, self._write)
            with lock:
                state[:] = [phase, done, total, item]

        def beat() -> None:
            while not stop.wait(self.heartbeat_s):
                with lock:
                    phase, done, total, item = state
                self._write(f"porter: {label}: {phase} {item} {done}/{total} ({time.monotonic() - started:.0f} s)")

        thread = threading.Thread(target=beat, name="porter-heartbeat", daemon=True)
        thread.start()
        try:
            yield update
        finally:
            stop.set()
            thread.join()

    def _write(self, text: str) -> None:
        with self._lock:
            self.stream.write(text + "\n")
            self.stream.flush()
