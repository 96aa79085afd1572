"""Judge patches: baseline once, the batch, bisection to the patch(es) at fault.

A set of patches passes when (1) no test that passed at baseline fails with it, and (2) no kernel
launch it brings about would fail on the target: a compile error, LDS over the limit or threads
over the limit, in a kernel whose file (or launch site) one of the patches touches, that was not
already failing the same way without the patches. Spills and failures the patches did not cause
are warnings.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from porter.records import CompileRecord, Patch, TestRun, Verdict
from porter.targets import Target
from porter.verify.crosscompile import compile_jobs, grouped_failures, jobs_from_launches, record_failure
from porter.verify.options import VerifyOptions
from porter.verify.protocol import BF16_DOT_ISSUE
from porter.verify.runner import RunResult, run_tests
from porter.verify.selection import select_tests, unexercised_warning
from porter.verify.workspace import (
    PatchApplyError,
    Workspace,
    apply_patch,
    apply_patch_file,
    copy_tree,
    create_workspace,
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
        reasons += [f"test passed without these patches and fails with them: {test}"
                    + (f" ({messages[test]})" if messages.get(test) else "") for test in self.regressions]
        return reasons + self.compile_failures


class Verifier:
    def __init__(self, repo: Path, patches: list[Patch], target: Target, options: VerifyOptions,
                 patch_files: dict[str, Path] | None = None):
        self.repo, self.target, self.options = repo, target, options
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
            from porter.verify.workspace import patch_file_paths

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
        raw = self._raw(tuple(self._with_dependencies(ids)))
        evaluation = Evaluation(tuple(ids), raw.result, raw.jobs, raw.compiles, problem=raw.problem)
        if self.baseline is not None and ids:
            self._compare(evaluation, self._references(ids))
        return evaluation

    def _raw(self, applied: tuple[str, ...]) -> Evaluation:
        if applied not in self.memo:
            self.apply(list(applied))
            result = run_tests(self.root, self.options, self.target.name, self.test_files)
            evaluation = Evaluation(applied, result, problem=result.problem)
            if self.options.cross_compile and self.options.device == "cpu":
                self._cross_compile(evaluation)
            self.memo[applied] = evaluation
        return self.memo[applied]

    def _references(self, ids: list[str]) -> list[Evaluation]:
        """States a set of patches must not make worse: the baseline; its dependencies outside the
        set applied alone; and the declared foundation patches (those others depend on) it includes,
        so that a fix which lets tests run at all does not hide a later patch breaking them."""
        assert self.baseline is not None
        closure = self._with_dependencies(ids)
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
        evaluation.compiles = compile_jobs(self.root, evaluation.jobs, self.target, jobs=self.options.compile_jobs,
                                           timeout_s=self.options.compile_timeout_s, cache_dir=self.cache_dir)

    def _compare(self, evaluation: Evaluation, references: list[Evaluation]) -> None:
        run = evaluation.result.run
        broken = set(run.failed) | set(run.errors)
        passed_before: list[str] = []
        for reference in references:
            passed_before += [t for t in reference.result.run.passed if t not in passed_before]
        evaluation.regressions = [t for t in passed_before if t in broken]
        evaluation.reference_passed = passed_before
        failing_before = {_job_key(j) for reference in references
                          for j, r in zip(reference.jobs, reference.compiles) if record_failure(r)}
        touched = {path for pid in evaluation.patch_ids for path in self.touched.get(pid, [])}
        for job, record in zip(evaluation.jobs, evaluation.compiles):
            if not record_failure(record):
                if record.spills:
                    evaluation.spill_warnings.append(f"{record.source}::{record.kernel}: {record.notes[-1]}")
                continue
            caused = (_job_key(job) not in failing_before
                      and bool(touched & ({job["file"]} | set(job.get("sites", []))))
                      and not self._fails_without_patches(job, record))
            (evaluation.caused if caused else evaluation.not_caused).append(record)

    def _fails_without_patches(self, job: dict, record: CompileRecord) -> bool:
        """A compile error the unpatched source gives for the same launch is not the patches' doing."""
        if record.ok or self.pristine is None:
            return False  # a launch that compiles but cannot run: its parameters are what changed
        key = _job_key(job)
        if key not in self.pristine_compiles:
            self.pristine_compiles[key] = compile_jobs(self.pristine, [job], self.target, jobs=1,
                                                       timeout_s=self.options.compile_timeout_s,
                                                       cache_dir=self.cache_dir)[0]
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
            except PatchApplyError as error:
                verdicts[patch.id] = Verdict(patch.id, False, [f"does not apply: {error}"])
        try:
            self.apply(applicable)
        except PatchApplyError as error:
            for patch_id in applicable:
                verdicts[patch_id] = Verdict(patch_id, False, [f"does not apply together with the others: {error}"])
            applicable = []
        self.test_files = self._selection(applicable)
        self._detect_torch()
        self.baseline = self.evaluate([])
        if self.baseline.problem:
            reason = f"baseline (no patches) could not be judged: {self.baseline.problem}"
            for patch_id in applicable:
                verdicts[patch_id] = Verdict(patch_id, False, [reason], tests=self.baseline.result.run)
            return [verdicts[p.id] for p in self.patches]
        if applicable:
            self._judge(applicable, verdicts)
        self.restore()
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
                verdict.reasons.insert(0, f"fails only in combination with {', '.join(i for i in ids if i != patch_id)}")
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
        relevant = [r for j, r in zip(evaluation.jobs, evaluation.compiles)
                    if touched & ({j["file"]} | set(j.get("sites", [])))]
        before = evaluation.reference_passed or base.passed
        verdict = Verdict(patch_id, accepted, [] if accepted else evaluation.reasons(), tests=run,
                          newly_passing=[t for t in run.passed if t not in before],
                          newly_failing=[t for t in (run.failed + run.errors) if t not in base.failed + base.errors],
                          compiles=relevant or list(evaluation.compiles))
        verdict.warnings = _warnings(evaluation, base)
        unexercised = unexercised_warning(run, sorted(touched))
        if unexercised:
            verdict.warnings.insert(0, unexercised)
        return verdict


def _warnings(evaluation: Evaluation, base: TestRun) -> list[str]:
    run = evaluation.result.run
    warnings = list(evaluation.compile_warnings)
    if not (run.passed or run.failed or run.errors) and not evaluation.problem:
        warnings.append("no test ran: the verdict rests on the cross-compilation alone")
    broken = [test for test in run.errors if test in base.errors or test in base.failed]
    if broken:
        example = f"{broken[0]}: {run.messages.get(broken[0], '')}".rstrip(": ")
        warnings.append(f"{len(broken)} test(s) error before and after, so these patches are not tested there "
                        f"(e.g. {example})")
    for test, reason in run.not_replayed.items():
        note = "passed at baseline, " if test in base.passed else ""
        warnings.append(f"not replayed on the CPU ({note}{reason}): {test}")
    bf16 = [launch["kernel"] for launch in evaluation.result.replay.launches if "bf16" in launch.get("dot_dtypes", [])]
    if bf16:
        warnings.append(f"{BF16_DOT_ISSUE}; kernels: {', '.join(sorted(set(bf16)))}")
    for item in evaluation.result.replay.autotune_disagreements:
        warnings.append(f"autotune configs of {item['kernel']} disagree ({item['detail']}): config "
                        f"{item['config_index']} [{item['config']}] vs config {item['reference_index']}")
    return warnings


def _job_key(job: dict) -> str:
    import json

    return json.dumps([job["module"], job["qualname"], job["signature"], job["constexprs"], job["options"]],
                      sort_keys=True, default=str)


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
    try:
        from porter.remedy.patches import apply_hunks
    except ImportError:
        return None
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


def verify_patches(repo: Path, patches: list[Patch], target: Target, options: VerifyOptions | None = None,
                   patch_files: dict[str, Path] | None = None) -> list[Verdict]:
    """Baseline once, the batch, bisection on failure: one Verdict per patch, in the given order."""
    options = _configured(repo, options or VerifyOptions())
    verifier = Verifier(Path(repo), patches, target, options, patch_files)
    start = time.monotonic()
    verifier.open()
    try:
        verdicts = verifier.run()
    finally:
        verifier.close()
    for verdict in verdicts:
        verdict.warnings.append(f"verified in {time.monotonic() - start:.1f} s")
    return verdicts


def verify_tree(repo: Path, target: Target, options: VerifyOptions | None = None) -> Verdict:
    """Replay the tests and cross-compile every launch of the tree as it is (no patches)."""
    options = _configured(repo, options or VerifyOptions())
    verifier = Verifier(Path(repo), [], target, options)
    verifier.open()
    try:
        verifier._detect_torch()
        evaluation = verifier.evaluate([])
    finally:
        verifier.close()
    run = evaluation.result.run
    reasons = [evaluation.result.problem] if evaluation.result.problem else []
    reasons += [f"test fails: {test}" + (f" ({run.messages[test]})" if run.messages.get(test) else "")
                for test in run.failed + run.errors]
    reasons += grouped_failures(evaluation.compiles)
    warnings = _warnings(evaluation, TestRun(command=[]))
    return Verdict("tree", not reasons, reasons, tests=run, compiles=evaluation.compiles, warnings=warnings)


def _configured(repo: Path, options: VerifyOptions) -> VerifyOptions:
    from dataclasses import replace

    from porter.config import load_config

    config = load_config(repo)
    options = options.with_config(config.table("verify"), config.source or "pyproject.toml")
    if options.cache_dir is None:
        options = replace(options, cache_dir=Path(repo).resolve() / config.cache_dir / "verify")
    return options
