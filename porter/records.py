"""The typed records the pipeline stages exchange.

discover -> analyze -> remedy (codemod | shim | agent) -> verify -> report

Each stage reads the records of the stage before it and produces its own; no stage reaches back.
Records are plain dataclasses so that every report format can serialise them with `to_dict`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Severity = Literal["error", "warning", "info"]
RemedyKind = Literal["codemod", "shim", "agent", "advice"]
Provenance = Literal["static", "runtime"]  # static: the analyzer's reading; runtime: the verifier saw it on the target
# Does the code run on the target (platform reachability)? rocm_only: it runs there and on no NVIDIA GPU (written
# for AMD), so findings premised on NVIDIA tuning are dropped there; other rules report it as target. opt_in: it runs
# only where a user turns on a default-off option (an environment switch, a parameter no caller sets): dropped too.
# unreached: no entry point of the package reaches it on any GPU (a module nothing loads, a function nothing calls).
Reach = Literal["target", "unknown", "nvidia_only", "rocm_only", "opt_in", "unreached"]
DROPPED_REACH: tuple[Reach, ...] = ("nvidia_only", "rocm_only", "opt_in", "unreached")  # hidden unless asked for
VerdictState = Literal["accepted", "rejected", "unverified"]  # unverified: no evidence either way

# What a long stage reports as it goes: (phase, done, total, item). The scan calls it per file read,
# indexed and analysed; the verifier per test run and kernel compile, before ("testing", "compiling")
# and after ("tested", "compiled") each, its total growing when bisection adds runs. The CLI draws it.
ProgressCallback = Callable[[str, int, int, str], None]
TESTING, TESTED, COMPILING, COMPILED = "testing", "tested", "compiling", "compiled"

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
    reach_reason: str = ""  # why the code does not (or may not) run on the target, for `reach` != target

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
    depends_on: list[str] = field(
        default_factory=list
    )  # patch ids to apply first (shim module, overlapping edits) (H4)

    @property
    def paths(self) -> list[str]:
        return [edit.path for edit in self.edits]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"paths": self.paths}


@dataclass
class ReviewItem:
    """A finding porter does not patch, and what a person should do about it."""

    finding: Finding
    kind: str  # agent | advice | declined | no-codemod | error
    reason: str
    guidance: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"finding": self.finding.to_dict(), "kind": self.kind, "reason": self.reason, "guidance": self.guidance}


@dataclass
class Plan:
    """The remedy stage's output: patches, what needs review, the findings and the texts diffs are against."""

    target: Any  # porter.targets.Target
    patches: list[Patch] = field(default_factory=list)
    needs_review: list[ReviewItem] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    originals: dict[str, str] = field(default_factory=dict)  # path -> text the diffs were computed on

    def patch(self, patch_id: str) -> Patch:
        return next(p for p in self.patches if p.id == patch_id)


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
    # failed/errored test id -> repository files (relative) on its traceback: the verifier judges first the
    # patches editing them (a module-level check that keeps the package from importing on the target)
    traceback_files: dict[str, list[str]] = field(default_factory=dict)
    duration_s: float = 0.0
    returncode: int = 0
    timed_out: bool = False
    output_tail: str = ""
    isolation: str = ""  # the confinement the command ran under (porter.verify.isolation), as one line


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
    # False: the compile could not finish (it timed out, its worker died): no evidence either way, never a failure
    checked: bool = True
    notes: list[str] = field(default_factory=list)
    source: str = ""  # file defining the kernel, relative to the repository root (H6)
    signature: dict[str, str] = field(default_factory=dict)  # argument types it was compiled for (H6)
    cached: bool = False  # taken from porter's compile cache (H6)
    launch_site: str = ""  # "path:line" of the first launch call the replay saw (relative to the repository root)
    kernel_line: int = 0  # first line of the kernel's definition (its first decorator) in `source`
    tests: list[str] = field(default_factory=list)  # replayed tests that launched it


@dataclass
class Verdict:
    """The verifier's decision on one patch, with its evidence.

    `accepted` is True only with evidence: a test importing the patched code replayed green and every
    kernel the patch touches compiled for the target. `state` "unverified" (accepted False) says the
    evidence is missing rather than against the patch; `reasons` then say which part is missing."""

    patch_id: str
    accepted: bool
    reasons: list[str] = field(default_factory=list)  # why rejected or unverified, or caveats when accepted
    tests: TestRun | None = None
    newly_passing: list[str] = field(default_factory=list)
    newly_failing: list[str] = field(default_factory=list)
    compiles: list[CompileRecord] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    state: VerdictState | None = None  # None: "accepted" when accepted, else "rejected"
    # accepted patches applied under this one when it was judged (with what they depend on): its evidence
    # rests on them, so it is accepted only with them (e.g. the fix that lets the tests import at all)
    stacked_on: list[str] = field(default_factory=list)

    @property
    def status(self) -> VerdictState:
        if self.accepted:
            return "accepted"
        return "unverified" if self.state == "unverified" else "rejected"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"status": self.status}


@dataclass
class Verification:
    """One verifier run over a set of patches: the unpatched tree, the verdicts, the tree as it would
    be written (every accepted patch applied). `problem`: the run could not judge anything (the
    baseline did not run, time out...), with what to set; every verdict is then unverified."""

    verdicts: list[Verdict]
    baseline: Verdict | None = None
    accepted_tree: Verdict | None = None
    problem: str = ""
    summary: str = ""  # one line: how verification went


@dataclass
class RewriteRound:
    """One pass of scan -> remedies -> verify -> runtime findings."""

    number: int
    patches: int
    accepted: int
    new_runtime: list[str] = field(default_factory=list)  # runtime findings first seen in this round
    # value-flow origins whose patch broke a project test, remedied at the launches they reach instead
    relocated: list[str] = field(default_factory=list)
    agent_asked: int = 0  # findings handed to the agent in this round


@dataclass
class RewriteResult:
    """What `porter rewrite` did, for the report and the exit code."""

    plan: Plan | None  # the last round's
    scan: Any  # porter.analyze.scan.ScanResult
    verdicts: dict[str, Verdict]
    verification: str  # how verification went, one line
    target_failures: list[Finding] = field(default_factory=list)  # runtime findings left on the written tree
    rounds: list[RewriteRound] = field(default_factory=list)
    applied: set[str] = field(default_factory=set)
    skipped: dict[str, str] = field(default_factory=dict)  # patch id -> why it was not applied
    verified: bool = True  # False with --no-verify
    problem: str = ""  # verification could not run (see Verification.problem)

    def statuses(self) -> dict[str, str]:
        return {
            p.id: self.verdicts[p.id].status if p.id in self.verdicts else "unverified"
            for p in (self.plan.patches if self.plan is not None else [])
        }

    @property
    def exit_code(self) -> int:
        """0 only when the replay shows nothing failing on the target and every patch is accepted."""
        if self.problem:
            return 2
        clean = all(state == "accepted" for state in self.statuses().values())
        return 0 if clean and not self.target_failures else 1  # with --no-verify every patch is unverified


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
    triton_ms: float  # math.inf when no candidate config runs on the target
    library_faster: bool
    note: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: an infinite triton_ms (no config runs) is null, never the non-JSON `Infinity`."""
        return asdict(self) | ({"triton_ms": None} if self.triton_ms == float("inf") else {})
