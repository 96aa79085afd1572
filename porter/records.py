"""The typed records the pipeline stages exchange.

discover -> analyze -> remedy (codemod | shim | agent) -> verify -> report

Each stage reads the records of the stage before it and produces its own; no stage reaches back.
Records are plain dataclasses so that every report format can serialise them with `to_dict`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Severity = Literal["error", "warning", "info"]
RemedyKind = Literal["codemod", "shim", "agent", "advice"]
Provenance = Literal["static", "runtime"]  # static: the analyzer's reading; runtime: the verifier saw it on the target
Reach = Literal["target", "unknown", "nvidia_only"]  # does the code run on the target (platform reachability)

SEVERITY_RANK: dict[str, int] = {"info": 0, "warning": 1, "error": 2}


@dataclass(frozen=True)
class SourceFile:
    """One file found by discovery. `path` is POSIX and relative to the scanned root."""

    path: str
    absolute: str
    size: int
    kind: str = "python"  # python | shell | dockerfile: which rules may look at it


@dataclass(frozen=True)
class SkipNote:
    """A file discovery or analysis passed over, and why (not UTF-8, too large, symlink loop...)."""

    path: str
    reason: str


@dataclass
class Finding:
    """One occurrence of a rule in a file. Lines and columns are 1-based, end inclusive of line."""

    rule: str  # rule id, e.g. "PT101"
    name: str  # rule slug, e.g. "num-warps-over-wave64-limit"
    severity: Severity
    path: str  # POSIX, relative to the scanned root
    line: int
    column: int
    end_line: int
    end_column: int
    message: str
    fix: RemedyKind | None  # the remedy kind the rule offers, None when nothing can be proposed
    category: str = ""  # triton | pytorch | libraries | environment
    target: str = ""  # target name the finding was computed for
    facts: dict[str, Any] = field(default_factory=dict)  # target facts the message relies on
    data: dict[str, Any] = field(default_factory=dict)  # rule-specific values for the remedy stage
    snippet: str = ""  # the source lines of the finding, for code frames
    provenance: Provenance = "static"
    reach: Reach = "target"  # nvidia_only findings are dropped unless asked for; unknown ones are marked

    def sort_key(self) -> tuple:
        return (self.path, self.line, self.column, self.rule)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class FileEdit:
    """The whole new text of one file. `before` is the text the edit was computed against."""

    path: str  # POSIX, relative to the repository root
    before: str | None  # None: the file is created
    after: str


@dataclass
class Patch:
    """One reviewable change: accepted or rejected as a unit."""

    id: str  # "0001-PT101" style, stable within a run
    kind: RemedyKind
    rules: list[str]
    title: str
    rationale: str
    edits: list[FileEdit]
    findings: list[Finding] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)  # target facts the change relies on
    safety: Literal["safe", "unsafe"] = "safe"
    diff: str = ""  # unified diff of all edits, `git apply`-able
    notes: list[str] = field(default_factory=list)
    depends_on: list[str] = field(default_factory=list)  # patch ids to apply first (shim module, overlapping edits) (H4)

    @property
    def paths(self) -> list[str]:
        return [edit.path for edit in self.edits]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"paths": self.paths}


@dataclass
class TestRun:
    """The outcome of one test command run (baseline or with patches)."""

    command: list[str]
    passed: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    not_replayed: dict[str, str] = field(default_factory=dict)  # test id -> why it could not run here
    messages: dict[str, str] = field(default_factory=dict)  # failed/errored test id -> first line of its error (H6)
    imports: dict[str, list[str]] = field(default_factory=dict)  # test id -> repository files (relative) it imported
    duration_s: float = 0.0
    returncode: int = 0
    timed_out: bool = False
    output_tail: str = ""


@dataclass
class CompileRecord:
    """One kernel compiled for the target by Triton's backend, with its resource figures."""

    kernel: str
    config: dict[str, Any]
    arch: str
    ok: bool
    error: str = ""
    vgprs: int | None = None
    sgprs: int | None = None
    spills: int | None = None
    lds_bytes: int | None = None
    lds_limit: int | None = None
    threads: int | None = None
    thread_limit: int | None = None
    occupancy: int | None = None
    launchable: bool = True  # False: compiles, but would fail at launch on the target
    notes: list[str] = field(default_factory=list)
    source: str = ""  # file defining the kernel, relative to the repository root (H6)
    signature: dict[str, str] = field(default_factory=dict)  # argument types it was compiled for (H6)
    cached: bool = False  # taken from porter's compile cache (H6)


@dataclass
class Verdict:
    """The verifier's decision on one patch, with its evidence."""

    patch_id: str
    accepted: bool
    reasons: list[str] = field(default_factory=list)  # why rejected, or caveats when accepted
    tests: TestRun | None = None
    newly_passing: list[str] = field(default_factory=list)
    newly_failing: list[str] = field(default_factory=list)
    compiles: list[CompileRecord] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class LibraryAdvice:
    """porter tune's verdict on one GEMM: is the vendor BLAS predicted faster than the best Triton
    config? `library_ms` is None when the target has no measured ceiling for the dtype."""

    target: str
    dtype: str
    m: int
    n: int
    k: int
    library: str  # cuBLAS, hipBLASLt
    library_ms: float | None
    triton_ms: float
    library_faster: bool
    note: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
