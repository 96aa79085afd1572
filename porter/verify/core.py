"""Judge patches: baseline once, then in stages, each the batch and bisection to the patch(es) at fault.

Each stage runs on top of the patches accepted in the stages before it (the fix that lets the tests
import at all is judged first, see Verifier._stages), and is judged against that stack applied alone:
a good patch gets evidence from tests that could run, a broken one is still blamed for what it breaks.

A patch is accepted only with evidence (fail closed): a test that imports the patched code replayed
green with it, and every kernel it touches compiled for the target. A patch the tests and compiles do
not speak against, but without that evidence, is "unverified" and never applied.

A set of patches passes when (1) no test that passed at baseline fails with it, and (2) no kernel
launch it brings about would fail on the target: a compile error, LDS over the limit or threads
over the limit, in a kernel whose file (or launch site) one of the patches touches, that was not
already failing the same way without the patches. Spills and failures the patches did not cause
are warnings.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from porter.records import (
    COMPILED,
    COMPILING,
    TESTED,
    TESTING,
    CompileRecord,
    Patch,
    ProgressCallback,
    TestRun,
    Verdict,
    Verification,
)
from porter.targets import Target
from porter.verify.crosscompile import (
    compile_jobs,
    compile_outcome,
    grouped_failures,
    jobs_from_launches,
    record_failure,
    unchecked_compiles,
)
from porter.verify.memo import EvaluatedState, StateMemo, state_key
from porter.verify.options import VerifyOptions
from porter.verify.protocol import BF16_DOT_ISSUE, launch_identity
from porter.verify.runner import RunResult, is_pytest, run_tests
from porter.verify.selection import build_import_graph, is_test_file, reverse_closure, select_tests, unexercised_warning
from porter.verify.workspace import (
    PatchApplyError,
    Workspace,
    apply_patch,
    apply_patch_file,
    copy_tree,
    create_workspace,
    patch_file_paths,
)


@dataclass
class Evaluation:
    """The tests and compiles of one set of patches on top of the unpatched copy."""

    patch_ids: tuple[str, ...]
    result: RunResult
    jobs: list[dict[str, Any]] = field(default_factory=list)
    compiles: list[CompileRecord] = field(default_factory=list)
    regressions: list[str] = field(default_factory=list)  # tests passing at baseline, failing now
    caused: list[CompileRecord] = field(default_factory=list)  # failures these patches bring about
    not_caused: list[CompileRecord] = field(default_factory=list)  # failing, but not their doing
    spill_warnings: list[str] = field(default_factory=list)
    problem: str = ""
    reference_passed: list[str] = field(default_factory=list)  # what passed in the reference states

    @property
    def compile_failures(self) -> list[str]:
        return grouped_failures(self.caused)

    @property
    def compile_warnings(self) -> list[str]:
        return self.spill_warnings + grouped_failures(self.not_caused, "still fails, not caused by these patches: ")

    @property
    def ok(self) -> bool:
        return not (self.regressions or self.caused or self.problem)

    def reasons(self) -> list[str]:
        reasons = [self.problem] if self.problem else []
        messages = self.result.run.messages
        reasons += [
            f"test passed without these patches and fails with them: {test}"
            + (f" ({messages[test]})" if messages.get(test) else "")
            for test in self.regressions
        ]
        return reasons + self.compile_failures


class Verifier:
    def __init__(
        self,
        repo: Path,
        patches: list[Patch],
        target: Target,
        options: VerifyOptions,
        patch_files: dict[str, Path] | None = None,
        progress: ProgressCallback | None = None,
        judge_first: Sequence[str] = (),
        states: StateMemo | None = None,
    ):
        self.repo, self.target, self.options = repo, target, options
        self.states = states if states is not None else StateMemo()  # by content, shared across rounds
        self.judge_first = set(judge_first)  # the caller's foundation: judged before the rest (see _stages)
        self.stack: list[str] = []  # accepted patches every later judgement runs on top of (see _judge)
        self.progress = progress or (lambda phase, done, total, item: None)
        self.steps_done = 0  # test runs and kernel compiles finished
        self.steps_total = 0  # those known to be needed so far: bisection and each run's launches add more
        self.patches = list(patches)
        self.patch_files = patch_files or {}
        self.by_id = {p.id: p for p in self.patches}
        self.workspace: Workspace | None = None
        self.pristine: Path | None = None
        self.originals: dict[str, str | None] = {}
        self.touched: dict[str, list[str]] = {}
        self.baseline: Evaluation | None = None
        self.test_files: list[str] | None = None
        self.cache_dir = options.cache_dir
        self.pristine_compiles: dict[str, CompileRecord] = {}
        self.memo: dict[tuple[str, ...], Evaluation] = {}
        self.kernels: dict[str, set[str]] = {}  # patch id -> kernels its edits touch (definition or launch)
        self.jit_names: dict[str, set[str]] | None = None  # JIT function name -> defining files
        self.importers: dict[str, set[str] | None] = {}  # patch id -> test files importing it (None: all)
        self.problem = ""  # set when the baseline could not run: nothing can be judged

    # ------------------------------------------------------------ workspace

    def open(self) -> None:
        self.workspace = create_workspace(self.repo)
        self.pristine = self.workspace.base.parent / "pristine"
        copy_tree(self.repo.resolve(), self.pristine)

    def close(self) -> None:
        if self.workspace is not None and not self.options.keep_workspace:
            self.workspace.close()
            import shutil

            if self.pristine is not None:
                shutil.rmtree(self.pristine, ignore_errors=True)

    @property
    def root(self) -> Path:
        assert self.workspace is not None
        return self.workspace.root

    def _snapshot(self, paths: list[str]) -> None:
        for rel in paths:
            if rel not in self.originals:
                path = self.root / rel
                self.originals[rel] = path.read_text(encoding="utf-8") if path.is_file() else None

    def restore(self) -> None:
        for rel, text in self.originals.items():
            path = self.root / rel
            if text is None:
                path.unlink(missing_ok=True)
            else:
                path.write_text(text, encoding="utf-8")

    def _apply_one(self, patch: Patch) -> list[str]:
        if patch.id in self.patch_files:
            paths = patch_file_paths(self.root, self.patch_files[patch.id])
            self._snapshot(paths)
            apply_patch_file(self.root, self.patch_files[patch.id])
            return paths
        self._snapshot(patch.paths)
        _apply_record(self.root, patch)
        return patch.paths

    def apply(self, ids: list[str]) -> None:
        self.restore()
        for patch_id in self._with_dependencies(ids):
            self.touched[patch_id] = self._apply_one(self.by_id[patch_id])

    def _with_dependencies(self, ids: list[str]) -> list[str]:
        wanted: set[str] = set()
        stack = list(ids)
        while stack:
            current = stack.pop()
            if current in wanted or current not in self.by_id:
                continue
            wanted.add(current)
            stack.extend(getattr(self.by_id[current], "depends_on", None) or [])
        return [p.id for p in self.patches if p.id in wanted]  # plan order

    # ------------------------------------------------------------ evaluation

    def evaluate(self, ids: list[str]) -> Evaluation:
        """Tests and compiles with `ids` (and what they depend on) applied, judged against the
        reference states (see `_references`). The same set of applied patches runs only once."""
        raw = self._raw(tuple(self._on_stack(ids)))
        evaluation = Evaluation(tuple(ids), raw.result, raw.jobs, raw.compiles, problem=raw.problem)
        if self.baseline is not None and ids:
            self._compare(evaluation, self._references(ids))
        return evaluation

    def _on_stack(self, ids: list[str]) -> list[str]:
        """What evaluating `ids` applies: them and the accepted stack, with what they depend on."""
        return self._with_dependencies([*self.stack, *ids])

    def plan_runs(self, runs: int) -> None:
        """Count `runs` test runs known to come (the baseline and the batch) into the progress total."""
        self.steps_total += runs

    def _step(self, phase: str, item: str) -> None:
        if phase in (TESTED, COMPILED):
            self.steps_done += 1
        self.steps_total = max(self.steps_total, self.steps_done + (phase in (TESTING, COMPILING)))
        self.progress(phase, self.steps_done, self.steps_total, item)

    def _raw(self, applied: tuple[str, ...]) -> Evaluation:
        if applied not in self.memo:
            self.apply(list(applied))
            key = state_key(self.root, self.originals, self.target.name, self.options, self.test_files)
            seen = self.states.get(key)
            if seen is None:
                evaluation = self._run(applied)
                self.states.put(key, EvaluatedState(evaluation.result, evaluation.jobs, evaluation.compiles))
            else:
                evaluation = self._reuse(applied, seen)
            self.memo[applied] = evaluation
        return self.memo[applied]

    def _run(self, applied: tuple[str, ...]) -> Evaluation:
        state = _state_name(applied)
        self._step(TESTING, state)
        result = run_tests(self.root, self.options, self.target.name, self.test_files)
        self._step(TESTED, f"{state}: {_run_summary(result.run, result.problem)}")
        evaluation = Evaluation(applied, result, problem=result.problem)
        if self.options.cross_compile and self.options.device == "cpu":
            self._cross_compile(evaluation)
        return evaluation

    def _reuse(self, applied: tuple[str, ...], seen: EvaluatedState) -> Evaluation:
        """The outcome of an earlier run of the same tree (an earlier round's, under other patch ids)."""
        state = _state_name(applied)
        self._step(TESTING, state)
        summary = _run_summary(seen.result.run, seen.result.problem)
        self._step(TESTED, f"{state}: the same tree as an earlier run: {summary}")
        return Evaluation(applied, seen.result, list(seen.jobs), list(seen.compiles), problem=seen.result.problem)

    def _references(self, ids: list[str]) -> list[Evaluation]:
        """States a set of patches must not make worse: the baseline; the stack and its dependencies
        outside the set applied alone; and the declared foundation patches (those others depend on) it
        includes, so that a fix which lets tests run at all does not hide a later patch breaking them."""
        assert self.baseline is not None
        closure = self._on_stack(ids)
        references = [self.baseline]
        outside = [pid for pid in closure if pid not in ids]
        if outside:
            references.append(self._raw(tuple(self._with_dependencies(outside))))
        foundation = {dep for p in self.patches for dep in (getattr(p, "depends_on", None) or [])}
        inside = [pid for pid in closure if pid in foundation]
        if inside and len(inside) < len(closure):
            references.append(self._raw(tuple(self._with_dependencies(inside))))
        return references

    def _cross_compile(self, evaluation: Evaluation) -> None:
        evaluation.jobs = jobs_from_launches(evaluation.result.replay.launches)
        if evaluation.jobs:
            self.steps_total += len(evaluation.jobs)
            self._step(COMPILING, f"{len(evaluation.jobs)} launch(es) of {_state_name(evaluation.patch_ids)}")
        evaluation.compiles = compile_jobs(
            self.root,
            evaluation.jobs,
            self.target,
            jobs=self.options.compile_jobs,
            timeout_s=self.options.compile_timeout_s,
            cache_dir=self.cache_dir,
            on_done=lambda record: self._step(COMPILED, _compile_summary(record)),
        )

    def _compare(self, evaluation: Evaluation, references: list[Evaluation]) -> None:
        run = evaluation.result.run
        broken = set(run.failed) | set(run.errors)
        passed_before: list[str] = []
        for reference in references:
            passed_before += [t for t in reference.result.run.passed if t not in passed_before]
        evaluation.regressions = [t for t in passed_before if t in broken]
        evaluation.reference_passed = passed_before
        failing_before = {
            _job_key(j)
            for reference in references
            for j, r in zip(reference.jobs, reference.compiles)
            if record_failure(r)
        }
        touched = {path for pid in evaluation.patch_ids for path in self.touched.get(pid, [])}
        for job, record in zip(evaluation.jobs, evaluation.compiles):
            if not record_failure(record):
                if record.spills:
                    evaluation.spill_warnings.append(f"{record.source}::{record.kernel}: {record.notes[-1]}")
                continue
            caused = (
                _job_key(job) not in failing_before
                and bool(touched & ({job["file"]} | set(job.get("sites", []))))
                and not self._fails_without_patches(job, record)
            )
            (evaluation.caused if caused else evaluation.not_caused).append(record)

    def _fails_without_patches(self, job: dict, record: CompileRecord) -> bool:
        """A compile error the unpatched source gives for the same launch is not the patches' doing."""
        if record.ok or self.pristine is None:
            return False  # a launch that compiles but cannot run: its parameters are what changed
        key = _job_key(job)
        if key not in self.pristine_compiles:
            self.pristine_compiles[key] = compile_jobs(
                self.pristine,
                [job],
                self.target,
                jobs=1,
                timeout_s=self.options.compile_timeout_s,
                cache_dir=self.cache_dir,
            )[0]
        before = self.pristine_compiles[key]
        return not before.ok and _error_class(before.error) == _error_class(record.error)

    # ------------------------------------------------------------ the decision

    def run(self) -> list[Verdict]:
        verdicts: dict[str, Verdict] = {}
        applicable = []
        for patch in self.patches:
            try:
                self.apply([patch.id])
                applicable.append(patch.id)
                self.kernels[patch.id] = self._touched_kernels(patch.id)
            except PatchApplyError as error:
                verdicts[patch.id] = Verdict(patch.id, False, [f"does not apply: {error}"])
        try:
            self.apply(applicable)
        except PatchApplyError as error:
            for patch_id in applicable:
                verdicts[patch_id] = Verdict(patch_id, False, [f"does not apply together with the others: {error}"])
            applicable = []
        self.test_files = self._selection(applicable)
        self.importers = {pid: _importing_test_files(self.root, self.touched.get(pid, [])) for pid in applicable}
        self._detect_torch()
        self.plan_runs(1 + bool(applicable))
        self.baseline = self.evaluate([])
        self.problem = baseline_problem(self.baseline.result, self.options)
        if self.problem:
            for patch_id in applicable:
                verdicts[patch_id] = Verdict(
                    patch_id, False, [self.problem], tests=self.baseline.result.run, state="unverified"
                )
            return [verdicts[p.id] for p in self.patches]
        if applicable:
            self._judge(applicable, verdicts)
        self.restore()
        _withhold_dependents(self.patches, verdicts)
        return [verdicts[p.id] for p in self.patches]

    def _detect_torch(self) -> None:
        """Skip importing torch in the plugin for a repository that never imports torch or triton."""
        from dataclasses import replace

        from porter.verify.selection import imports_any

        if not imports_any(self.root, ("torch", "triton")):
            env = dict(self.options.extra_env, PORTER_REPLAY_TORCH="0")
            self.options = replace(self.options, extra_env=env, cross_compile=False)

    def _selection(self, ids: list[str]) -> list[str] | None:
        if not self.options.select_tests or not ids:
            return None
        touched = sorted({path for pid in ids for path in self.touched.get(pid, [])})
        return select_tests(self.root, touched)

    def _judge(self, ids: list[str], verdicts: dict[str, Verdict]) -> None:
        """Judge in stages, each on top of the patches accepted before it (self.stack), so that a
        patch's tests run with what they need to import applied and a failure still falls on the
        stage's own patches. A patch left without evidence is judged again once the stack has grown:
        its tests may run now."""
        for group in self._stages(ids):
            self._judge_stage(group, verdicts)
        retry = self._judged_on_less(ids, verdicts)
        while retry:
            self._judge_stage(retry, verdicts)
            retry = self._judged_on_less(ids, verdicts)

    def _stages(self, ids: list[str]) -> list[list[str]]:
        """The caller's `judge_first` (accepted in an earlier round), then the patches editing a file on
        the traceback of a test failing at baseline (the check that keeps the package from importing),
        then the rest; each with what it depends on that no earlier stage holds."""
        failing = self._baseline_traceback_files()
        unblocking = [pid for pid in ids if failing & set(self.touched.get(pid, []))]
        stages: list[list[str]] = []
        for seeds in ([pid for pid in ids if pid in self.judge_first], unblocking, ids):
            held = {pid for stage in stages for pid in stage}
            stage = [pid for pid in self._with_dependencies(seeds) if pid in ids and pid not in held]
            stages += [stage] if stage else []
        return stages

    def _baseline_traceback_files(self) -> set[str]:
        """Repository files on the tracebacks of the tests failing before any patch."""
        assert self.baseline is not None
        return {path for files in self.baseline.result.run.traceback_files.values() for path in files}

    def _judge_stage(self, ids: list[str], verdicts: dict[str, Verdict]) -> None:
        self._judge_group(ids, verdicts)
        under = self._with_dependencies(self.stack)
        for patch_id in ids:
            verdicts[patch_id].stacked_on = [pid for pid in under if pid != patch_id]
        self.stack += [pid for pid in ids if verdicts[pid].accepted]

    def _judged_on_less(self, ids: list[str], verdicts: dict[str, Verdict]) -> list[str]:
        """Unverified patches judged before the stack last grew."""
        stack = set(self._with_dependencies(self.stack))
        return [pid for pid in ids if verdicts[pid].status == "unverified" and stack - {pid, *verdicts[pid].stacked_on}]

    def _judge_group(self, ids: list[str], verdicts: dict[str, Verdict]) -> None:
        batch = self.evaluate(ids)
        if batch.ok:
            for patch_id in ids:
                verdicts[patch_id] = self._verdict(patch_id, batch, accepted=True)
            return
        self._bisect(ids, batch, verdicts)

    def _bisect(self, ids: list[str], evaluation: Evaluation, verdicts: dict[str, Verdict]) -> None:
        """`evaluation` (of `ids`) failed: find the patches at fault by halves."""
        if len(ids) == 1:
            verdicts[ids[0]] = self._verdict(ids[0], evaluation, accepted=False)
            return
        half = len(ids) // 2
        parts = [ids[:half], ids[half:]]
        results = [self.evaluate(part) for part in parts]
        if all(r.ok for r in results):
            self._interaction(ids, evaluation, verdicts)
            return
        for part, result in zip(parts, results):
            if result.ok:
                for patch_id in part:
                    verdicts[patch_id] = self._verdict(patch_id, result, accepted=True)
            else:
                self._bisect(part, result, verdicts)

    def _interaction(self, ids: list[str], evaluation: Evaluation, verdicts: dict[str, Verdict]) -> None:
        """Each half passes alone, the whole fails: one patch's fault shows only with another (a fix
        that lets the tests import at all, say). Leave one out at a time: the patches without which
        the failure disappears, narrowed to those touching a failing kernel, are at fault."""
        necessary = [pid for pid in ids if self.evaluate([i for i in ids if i != pid]).ok]
        failing_files = {record.source for record in evaluation.caused}
        narrowed = [pid for pid in necessary if failing_files & set(self.touched.get(pid, []))]
        culprits = narrowed or necessary
        rest = [pid for pid in ids if pid not in culprits]
        remainder = self.evaluate(rest) if culprits and rest else None
        if not culprits or (remainder is not None and not remainder.ok):
            for patch_id in ids:
                verdict = self._verdict(patch_id, evaluation, accepted=False)
                verdict.reasons.insert(
                    0, f"fails only in combination with {', '.join(i for i in ids if i != patch_id)}"
                )
                verdicts[patch_id] = verdict
            return
        for patch_id in culprits:
            verdict = self._verdict(patch_id, evaluation, accepted=False)
            enablers = [i for i in necessary if i != patch_id]
            if enablers:
                verdict.reasons.append(f"(observable once {', '.join(enablers)} is applied)")
            verdicts[patch_id] = verdict
        for patch_id in rest:
            verdicts[patch_id] = self._verdict(patch_id, remainder or evaluation, accepted=True)

    def _verdict(self, patch_id: str, evaluation: Evaluation, accepted: bool) -> Verdict:
        assert self.baseline is not None
        run = evaluation.result.run
        base = self.baseline.result.run
        touched = set(self.touched.get(patch_id, []))
        relevant = [
            r for j, r in zip(evaluation.jobs, evaluation.compiles) if touched & ({j["file"]} | set(j.get("sites", [])))
        ]
        before = evaluation.reference_passed or base.passed
        verdict = Verdict(
            patch_id,
            accepted,
            [] if accepted else evaluation.reasons(),
            tests=run,
            newly_passing=[t for t in run.passed if t not in before],
            newly_failing=[t for t in (run.failed + run.errors) if t in before],
            compiles=relevant or list(evaluation.compiles),
        )
        verdict.warnings = _warnings(evaluation, base)
        unknown = [t for t in run.failed + run.errors if t not in before and not _failed_before(t, base)]
        if unknown:
            verdict.warnings.append(
                f"{len(unknown)} test(s) fail that did not run before these patches, so nothing says whether they "
                f"broke them (e.g. {_with_message(unknown[0], run)})"
            )
        unexercised = unexercised_warning(run, sorted(touched))
        if unexercised:
            verdict.warnings.insert(0, unexercised)
        if accepted:
            gaps = self._evidence_gaps(patch_id, evaluation)
            if gaps:
                verdict.accepted, verdict.state, verdict.reasons = False, "unverified", gaps
        return verdict

    # ------------------------------------------------------------ evidence

    def _touched_kernels(self, patch_id: str) -> set[str]:
        """JIT functions whose definition or launch lines the patch (applied now, with its dependencies) changes."""
        if self.jit_names is None:
            self.jit_names = jit_definitions(self.root)
        names: set[str] = set()
        for rel in self.touched.get(patch_id, []):
            path = self.root / rel
            if rel.endswith(".py") and path.is_file():
                names |= changed_kernels(self.originals.get(rel) or "", path.read_text(encoding="utf-8"))
        return {name for name in names if name in self.jit_names}

    def _evidence_gaps(self, patch_id: str, evaluation: Evaluation) -> list[str]:
        """What is missing for an accepted verdict: an importing test that passed, every touched kernel compiled."""
        gaps = []
        run = evaluation.result.run
        if not self.importing_tests(patch_id, run):
            files = ", ".join(self.touched.get(patch_id, [])) or "its files"
            gaps.append(
                f"no test that imports {files} passed with the patch "
                f"({len(run.passed)} passed, {len(run.failed) + len(run.errors)} failed or errored, "
                f"{len(run.not_replayed)} not replayed)"
            )
        missing = [name for name in sorted(self.kernels.get(patch_id, set())) if not self._compiled(name, evaluation)]
        if missing:
            why = (
                "cross-compilation is off"
                if not self.options.cross_compile
                else unchecked_compiles([r for r in evaluation.compiles if r.kernel in missing])
                or "no replayed test launched them, or they do not compile and launch on the target"
            )
            gaps.append(f"kernel(s) {', '.join(missing)} not compiled for {self.target.arch} ({why})")
        return gaps

    def _compiled(self, name: str, evaluation: Evaluation) -> bool:
        """Every compile of the kernel (or, for a JIT helper no test launches, of the kernels in the files
        defining it) compiled and would launch on the target, and there is at least one."""
        records = [r for r in evaluation.compiles if r.kernel == name]
        if not records:
            files = (self.jit_names or {}).get(name, set())
            records = [r for r in evaluation.compiles if r.source in files]
        return bool(records) and all(r.ok and r.launchable for r in records)

    def importing_tests(self, patch_id: str, run: TestRun) -> list[str]:
        """Passed tests that import the patched files: from the replay's record of imports when it has
        one, else from the static import graph of the patched tree."""
        touched = set(self.touched.get(patch_id, []))
        if run.imports:
            return [t for t in run.passed if touched & set(run.imports.get(t, []))]
        files = self.importers.get(patch_id)
        if files is None:
            return [t for t in run.passed if "::" in t]
        return [t for t in run.passed if t.split("::")[0] in files]


def _state_name(applied: tuple[str, ...] | list[str]) -> str:
    return "the unpatched tree" if not applied else f"{len(applied)} patch(es) {', '.join(applied)}"


def _run_summary(run: TestRun, problem: str) -> str:
    counts = [
        f"{len(tests)} {status}"
        for status, tests in (("passed", run.passed), ("failed", run.failed), ("error", run.errors))
        if tests
    ]
    failing = run.failed + run.errors
    text = ", ".join(counts) or "no tests ran"
    text += f" in {run.duration_s:.1f} s"
    if failing:
        text += f" (failing: {', '.join(failing[:3])}{', ...' if len(failing) > 3 else ''})"
    return f"{text}: {problem}" if problem else text


def _compile_summary(record: CompileRecord) -> str:
    return f"{record.source}::{record.kernel} for {record.arch}: {compile_outcome(record)}"


def _withhold_dependents(patches: list[Patch], verdicts: dict[str, Verdict]) -> None:
    """A patch is accepted only with what it depends on and was judged on top of: its evidence was
    gathered with them applied. Until nothing changes: a stack need not come first in plan order."""
    withheld = True
    while withheld:
        withheld = False
        for patch in patches:
            verdict = verdicts[patch.id]
            needed = dict.fromkeys(patch.depends_on + verdict.stacked_on)
            missing = [dep for dep in needed if dep in verdicts and not verdicts[dep].accepted]
            if verdict.accepted and missing:
                verdict.accepted, verdict.state, withheld = False, "unverified", True
                verdict.reasons = [f"depends on (or was judged on top of) {', '.join(missing)}, which is not accepted"]


def _warnings(evaluation: Evaluation, base: TestRun) -> list[str]:
    run = evaluation.result.run
    warnings = list(evaluation.compile_warnings)
    if not (run.passed or run.failed or run.errors) and not evaluation.problem:
        warnings.append(NO_TEST_RAN)
    broken = [test for test in run.errors + run.failed if _failed_before(test, base)]
    if broken:
        warnings.append(
            f"{len(broken)} test(s) fail before and after, so these patches are not tested there "
            f"(e.g. {_with_message(broken[0], run)})"
        )
    for test, reason in run.not_replayed.items():
        note = "passed at baseline, " if test in base.passed else ""
        warnings.append(f"not replayed on the CPU ({note}{reason}): {test}")
    bf16 = [launch["kernel"] for launch in evaluation.result.replay.launches if "bf16" in launch.get("dot_dtypes", [])]
    if bf16:
        warnings.append(f"{BF16_DOT_ISSUE}; kernels: {', '.join(sorted(set(bf16)))}")
    for item in evaluation.result.replay.autotune_disagreements:
        warnings.append(
            f"autotune configs of {item['kernel']} disagree ({item['detail']}): config "
            f"{item['config_index']} [{item['config']}] vs config {item['reference_index']}"
        )
    return warnings


def _with_message(test: str, run: TestRun) -> str:
    return f"{test}: {run.messages.get(test, '')}".rstrip(": ")


def _failed_before(test: str, base: TestRun) -> bool:
    """The test failed in the reference run, by its own id or with its whole file (a module that did not
    import errors as `tests/test_x.py`: its tests were broken then too, not by what runs now)."""
    failed = set(base.failed) | set(base.errors)
    return test in failed or test.split("::", 1)[0] in failed


def _importing_test_files(root: Path, touched: list[str]) -> set[str] | None:
    """Test files that import one of `touched`, directly or through other modules; None when a touched
    file is a conftest (every test under it imports it)."""
    if any(Path(rel).name == "conftest.py" for rel in touched):
        return None
    graph = build_import_graph(root)
    known = {rel for rel in touched if rel in graph.imports}
    return {rel for rel in reverse_closure(graph, known) if is_test_file(rel)}


def changed_kernels(before: str, after: str) -> set[str]:
    """Names of Triton JIT functions on changed lines of `after`: decorated definitions whose lines
    change, and `name[grid](...)` launches whose lines change (checked against jit names later)."""
    import ast
    import difflib

    changed: set[int] = set()
    matcher = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines(), autojunk=False)
    for tag, _i1, _i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            changed.update(range(j1 + 1, max(j2, j1 + 1) + 1))
    try:
        tree = ast.parse(after)
    except SyntaxError:
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and any(_is_triton_decorator(d) for d in node.decorator_list):
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            if changed & set(range(start, (node.end_lineno or node.lineno) + 1)):
                names.add(node.name)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript):
            launched = node.func.value
            name = launched.id if isinstance(launched, ast.Name) else getattr(launched, "attr", None)
            if name and changed & set(range(node.lineno, (node.end_lineno or node.lineno) + 1)):
                names.add(name)
    return names


def jit_definitions(root: Path) -> dict[str, set[str]]:
    """Triton JIT function name -> the files (relative) defining it, over the repository."""
    import ast

    found: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if any(part.startswith(".") or part == "__pycache__" for part in Path(rel).parts):
            continue
        try:
            text = path.read_text(encoding="utf-8")
            tree = ast.parse(text) if "jit" in text else None
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
            continue
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.FunctionDef) and any(_is_triton_decorator(d) for d in node.decorator_list):
                found.setdefault(node.name, set()).add(rel)
    return found


def _is_triton_decorator(node) -> bool:
    import ast

    target = node.func if isinstance(node, ast.Call) else node
    name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
    return name == "jit"


def baseline_problem(result: RunResult, options: VerifyOptions) -> str:
    """Why the unpatched tree's test run cannot serve as a baseline, with what to set; "" when it can."""
    run = result.run
    if run.timed_out:
        return (
            f"the baseline test run timed out after {options.timeout_s:g} s: raise [tool.porter.verify] "
            'timeout, or set test_cmd to a faster subset (e.g. "python -m pytest tests/unit"), and keep '
            "select_tests = true so only the tests importing the patched files run"
        )
    if result.problem:
        return (
            f"the baseline test run failed ({result.problem}): set [tool.porter.verify] test_cmd to the "
            "command that runs this project's tests"
        )
    missing = sorted(
        {
            m.group(1)
            for m in (
                re.search(r"No module named '([\w.]+)'", run.messages.get(t, "")) for t in run.errors + run.failed
            )
            if m
        }
    )
    if missing and not run.passed:
        return (
            f"the tests cannot import {', '.join(missing)} ({len(run.errors) + len(run.failed)} tests fail "
            "before any patch): install the project's test dependencies into the interpreter porter runs "
            "the tests with, or set [tool.porter.verify] test_cmd"
        )
    return ""


def _job_key(job: dict) -> str:
    import json

    return json.dumps(launch_identity(job), sort_keys=True, default=str)


def _error_class(error: str) -> str:
    """An error message without its position, to compare the same failure across versions of a file."""
    return re.sub(r"\s*\(at \d+:\d+ of the kernel\)", "", error).strip()


def _apply_record(root: Path, patch: Patch) -> None:
    """Apply a Patch's edits; an edit made against the original text merges onto earlier patches."""
    try:
        apply_patch(root, patch)
        return
    except PatchApplyError as first_error:
        merged = _merged_edits(root, patch)
        if merged is None:
            raise first_error from None
    for rel, text in merged.items():
        (root / rel).write_text(text, encoding="utf-8")


def _merged_edits(root: Path, patch: Patch) -> dict[str, str] | None:
    from porter.remedy.patches import apply_hunks

    merged = {}
    for edit in patch.edits:
        path = root / edit.path
        if edit.before is None or not path.is_file():
            return None
        text = apply_hunks(path.read_text(encoding="utf-8"), edit.before, edit.after)
        if text is None:
            return None
        merged[edit.path] = text
    return merged


# ------------------------------------------------------------ entry points


def verify_patches(
    repo: Path,
    patches: list[Patch],
    target: Target,
    options: VerifyOptions | None = None,
    patch_files: dict[str, Path] | None = None,
    progress: ProgressCallback | None = None,
    judge_first: Sequence[str] = (),
) -> list[Verdict]:
    """Baseline once, the batch, bisection on failure: one Verdict per patch, in the given order.
    `progress` hears of each test run and kernel compile (porter.records.ProgressCallback);
    `judge_first` names patches to judge before the others, which then run on top of those accepted."""
    return judge_patches(repo, patches, target, options, patch_files, progress, judge_first).verdicts


def judge_patches(
    repo: Path,
    patches: list[Patch],
    target: Target,
    options: VerifyOptions | None = None,
    patch_files: dict[str, Path] | None = None,
    progress: ProgressCallback | None = None,
    judge_first: Sequence[str] = (),
) -> Verification:
    """verify_patches, with why verification could not run (`problem`: the baseline test run did not start,
    timed out or could not import the project's dependencies), which `porter verify` turns into exit 2."""
    options = _configured(repo, options or VerifyOptions())
    verifier = Verifier(Path(repo), patches, target, options, patch_files, progress, judge_first)
    start = time.monotonic()
    verifier.open()
    try:
        verdicts = verifier.run()
    finally:
        verifier.close()
    for verdict in verdicts:
        verdict.warnings.append(f"verified in {time.monotonic() - start:.1f} s")
    return Verification(verdicts, problem=verifier.problem)


def verify_plan(
    repo: Path,
    patches: list[Patch],
    target: Target,
    options: VerifyOptions | None = None,
    progress: ProgressCallback | None = None,
    judge_first: Sequence[str] = (),
    states: StateMemo | None = None,
) -> Verification:
    """verify_patches, plus the unpatched tree's and the accepted tree's own verdicts (runtime evidence).
    `states`: tree states evaluated by earlier calls (the rewrite loop's rounds), reused where the content matches."""
    options = _configured(repo, options or VerifyOptions())
    verifier = Verifier(Path(repo), patches, target, options, progress=progress, judge_first=judge_first, states=states)
    start = time.monotonic()
    verifier.open()
    try:
        verdicts = verifier.run()
        baseline = verifier.baseline
        accepted = [v.patch_id for v in verdicts if v.accepted]
        after = verifier.evaluate(accepted) if accepted and not verifier.problem else baseline
        trees = [
            _tree_verdict(name, e, options)
            for name, e in (("baseline", baseline), ("accepted", after))
            if e is not None
        ]
    finally:
        verifier.close()
    elapsed = time.monotonic() - start
    for verdict in verdicts:
        verdict.warnings.append(f"verified in {elapsed:.1f} s")
    selection = (
        f"{len(verifier.test_files)} test file(s) selected by import graph"
        if verifier.test_files
        else "the full test suite"
    )
    summary = (
        f"porter verify: replayed {selection} under {target.name} emulation"
        + (f", cross-compiled the launched kernels for {target.arch}" if verifier.options.cross_compile else "")
        + f", {elapsed:.0f} s (timeout {options.timeout_s:g} s per test run)"
    )
    return Verification(
        verdicts,
        baseline=trees[0] if trees else None,
        accepted_tree=trees[-1] if trees else None,
        problem=verifier.problem,
        summary=summary,
    )


NO_TEST_RAN = "no test ran, so no kernel was launched or cross-compiled for the target"
PYTEST_NO_TESTS = 5  # pytest's exit status when it collected no test


def _tree_verdict(name: str, evaluation: Evaluation, options: VerifyOptions) -> Verdict:
    """A tree's own verdict: failing tests and kernels that fail on the target, whoever caused them.
    Unverified, not accepted, when the test run could not judge the tree (it did not start, timed out, could
    not import the project's dependencies), when nothing passed or failed (no test ran, so no kernel was
    launched or cross-compiled either: an empty run is no evidence for the code), when a passing test command is
    not pytest on the CPU (run without the replay: nothing emulated or compiled), or when nothing failed but a
    kernel compile could not finish."""
    run = evaluation.result.run
    warnings = _warnings(evaluation, TestRun(command=[]))
    reasons = [
        f"test fails: {test}" + (f" ({run.messages[test]})" if run.messages.get(test) else "")
        for test in run.failed + run.errors
    ]
    reasons += grouped_failures(evaluation.compiles)
    missing = (
        baseline_problem(evaluation.result, options)
        or ("" if reasons or run.passed else _no_evidence(run))
        or ("" if reasons or options.device != "cpu" or is_pytest(run.command) else OPAQUE_COMMAND)
        or ("" if reasons else unchecked_compiles(evaluation.compiles))  # a failure seen outranks a gap
    )
    if missing:
        reasons, warnings = [missing], [w for w in warnings if w != NO_TEST_RAN]
    return Verdict(
        name,
        not reasons,
        reasons,
        tests=run,
        compiles=evaluation.compiles,
        warnings=warnings,
        state="unverified" if missing else None,
    )


OPAQUE_COMMAND = (
    "no evidence for the target: the test command is not pytest, so porter could not replay it under the target's "
    "emulation nor cross-compile its kernels (its exit status says only that it passes on this machine): set "
    "[tool.porter.verify] test_cmd (or --test-cmd) to a pytest command"
)


def _no_evidence(run: TestRun) -> str:
    skipped = f"{len(run.skipped)} skipped, " if run.skipped else ""
    collected = ": collected none" if run.returncode == PYTEST_NO_TESTS else ""
    return (
        f"no evidence: no test passed or failed ({skipped}test command exit {run.returncode}{collected}), so no "
        "kernel was launched or cross-compiled either: set [tool.porter.verify] test_cmd (or --test-cmd) to "
        "tests that exercise the code"
    )


def verify_tree(
    repo: Path, target: Target, options: VerifyOptions | None = None, progress: ProgressCallback | None = None
) -> Verdict:
    """Replay the tests and cross-compile every launch of the tree as it is (no patches)."""
    return judge_tree(repo, target, options, progress).verdicts[0]


def judge_tree(
    repo: Path, target: Target, options: VerifyOptions | None = None, progress: ProgressCallback | None = None
) -> Verification:
    """verify_tree, with why verification could not run (`problem`, as judge_patches)."""
    options = _configured(repo, options or VerifyOptions())
    verifier = Verifier(Path(repo), [], target, options, progress=progress)
    verifier.open()
    try:
        verifier._detect_torch()
        verifier.plan_runs(1)
        evaluation = verifier.evaluate([])
    finally:
        verifier.close()
    verdict = _tree_verdict("tree", evaluation, options)
    return Verification([verdict], problem=baseline_problem(evaluation.result, options))


def _configured(repo: Path, options: VerifyOptions) -> VerifyOptions:
    """Options with the repository's [tool.porter] applied, unless the caller applied a config already."""
    from porter.config import load_config

    return options if options.configured else options.with_porter_config(load_config(repo), repo)
