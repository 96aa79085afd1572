"""Tree states already tested and compiled in this porter run, keyed by what is in them.

The rewrite loop verifies again every round, under new patch ids: the unpatched tree, the shim alone, a codemod
whose edit did not change. A state with the same file contents, test selection, target and options as one
evaluated before gets that run's outcome instead of a second run. Tests are taken as deterministic here, as the
verifier already takes them within a round (one set of patches runs once).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from porter.records import CompileRecord
from porter.verify.options import VerifyOptions
from porter.verify.runner import RunResult


@dataclass
class EvaluatedState:
    """One tree state's test run and the compiles of the kernels it launched."""

    result: RunResult
    jobs: list[dict[str, Any]]
    compiles: list[CompileRecord]


@dataclass
class StateMemo:
    """Evaluated states by `state_key`; `reused` counts the runs it saved."""

    states: dict[str, EvaluatedState] = field(default_factory=dict)
    reused: int = 0

    def get(self, key: str) -> EvaluatedState | None:
        state = self.states.get(key)
        self.reused += state is not None
        return state

    def put(self, key: str, state: EvaluatedState) -> None:
        self.states[key] = state


def state_key(
    root: Path,
    originals: dict[str, str | None],
    target: str,
    options: VerifyOptions,
    test_files: list[str] | None,
) -> str:
    """A digest of the copy at `root`: every file a patch touched whose text differs from `originals` (the
    unpatched text, None where the file did not exist), with the target, the options and the tests selected."""
    changed = []
    for rel in sorted(originals):
        path = root / rel
        now = path.read_text(encoding="utf-8") if path.is_file() else None
        if now != originals[rel]:
            changed.append([rel, None if now is None else hashlib.sha256(now.encode()).hexdigest()])
    facts = [target, repr(options), test_files, changed]
    return hashlib.sha256(json.dumps(facts, default=str).encode()).hexdigest()
