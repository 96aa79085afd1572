"""`scan_tree`: discovery + cache + text pre-filter + parallel `analyze_source`, as one ScanResult.

Cost model: parsing with libcst dominates, so the parent does everything cheap before a parse
(read, sha256, cache lookup, UTF-8 check, pre-filter) and only files that can produce a finding
go to worker processes, in few large chunks. A warm re-scan of an unchanged tree therefore never
starts a process pool: it reads, hashes and looks up.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import hashlib
import hmac
import io
import json
import multiprocessing
import os
import secrets
import sys
import time
import tokenize
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from porter import __version__
from porter.analyze.prefilter import SourceWords, possible_rules, source_words
from porter.analyze.project import Project, reach_statements
from porter.analyze.project_facts import FACTS_FORMAT, empty_facts, module_facts, package_of_root, parse_or_none
from porter.analyze.triton import flow
from porter.config import PorterConfig, load_config
from porter.discover import DiscoverOptions, decode, discover, discover_paths, kinds_for, read_bytes
from porter.discover.kinds import kind_of
from porter.errors import UsageError
from porter.records import DROPPED_REACH, Finding, ProgressCallback, SkipNote, SourceFile
from porter.report.locations import git_top_level
from porter.report.output import atomic_write_text
from porter.report.rules import RuleInfo, rule_infos

CACHE_FORMAT = 3  # 3: noqa read from comment tokens only
CACHE_FILES_KEPT = 8  # cache files of other rule sets / targets / versions kept beside the current one
IN_PROCESS_BYTES = 256 * 1024  # below this much pending source a pool costs more than it saves
Progress = ProgressCallback  # (phase, done, total, the file just done)


@dataclass
class ScanStats:
    files_seen: int = 0  # files discovery returned
    analyzed: int = 0  # parsed and analysed in this run
    prefiltered: int = 0  # passed over by the pre-filters: no rule token in the text, or no rule's ast trigger holds
    cache_hits: int = 0
    skipped: int = 0  # skip notes (discovery and reading)
    lines: int = 0
    bytes: int = 0
    seconds: float = 0.0
    jobs: int = 1
    notes: list[str] = field(default_factory=list)  # non-fatal problems, e.g. cache not writable

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ScanResult:
    root: str
    target: str
    findings: list[Finding]  # reach target or unknown: what the report shows and the exit code counts
    skipped: list[SkipNote]
    stats: ScanStats
    rules: dict[str, RuleInfo] = field(default_factory=dict)
    unreachable: list[Finding] = field(default_factory=list)  # reach nvidia_only: shown on request only


def scan_tree(
    root: str | Path | Sequence[str | Path],
    target,
    ruleset,
    jobs: int | None = None,
    use_cache: bool = True,
    config: PorterConfig | None = None,
    progress: Progress | None = None,
) -> ScanResult:
    """Scan a directory (or one file, or several of both) for `target` with `ruleset`; findings sorted by
    path/line/col/rule. Several paths share one root (scan_root): their findings' paths start there.

    Every module's facts (porter.analyze.project_facts) come first, so that names re-exported by the
    project reach the rules, and each finding's reach is decided across the project afterwards:
    `findings` holds what runs (or may run) on the target, `unreachable` the NVIDIA-only rest.
    `progress(phase, done, total, path)` is called as files are read ("reading"), have their facts taken
    ("indexing") and are analysed ("analyzing": the files not answered by the cache).
    """
    started = time.perf_counter()
    target = _as_target(target)
    config = config if config is not None else load_config(scan_root(root))
    found = _discover(root, _discover_options(config, ruleset))
    stats = ScanStats(files_seen=len(found.files), jobs=_jobs(jobs, config))
    use_cache = use_cache and Path(found.root).is_dir() and not _one_file(root)  # no cache beside one named file
    directory = config.cache_path(found.root) if use_cache else None
    if use_cache and directory is None:
        stats.notes.append(f"cache not used: {config.cache_dir} leads outside {found.root}")
    cache = ScanCache.open(directory, ruleset, target, stats) if directory is not None else None
    skipped = list(found.skipped)
    _declare_project(found)
    sources = _read_all(found.files, stats, skipped, progress)
    reported, unreachable = _analyze_sources(sources, target, ruleset, config, cache, stats, skipped, progress)
    if cache is not None:
        cache.save()
    return _result(found.root, target, ruleset, reported, unreachable, skipped, stats, started)


def scan_text(
    text: str, path: str, target, ruleset, config: PorterConfig | None = None, root: str | Path | None = None
) -> ScanResult:
    """One source given as text (`porter scan -`), reported as `path` relative to `root` (default: the
    current directory). No cache and no project beyond the text itself: the file on disk, if any, may
    differ from what the editor or the pipe sends."""
    from porter.analyze.triton import flow

    started = time.perf_counter()
    target = _as_target(target)
    config = config if config is not None else PorterConfig()
    base = Path(root if root is not None else Path.cwd()).resolve()
    data = text.encode("utf-8")
    source = SourceFile(path, str(base / path), len(data), kind_of(Path(path).name) or "python")
    stats = ScanStats(files_seen=1, jobs=1, bytes=len(data), lines=_line_count(data))
    skipped: list[SkipNote] = []
    flow.set_project(None)
    item = _Source(source, data, hashlib.sha256(data).hexdigest(), text)
    reported, unreachable = _analyze_sources([item], target, ruleset, config, None, stats, skipped, None)
    return _result(str(base), target, ruleset, reported, unreachable, skipped, stats, started)


def _analyze_sources(
    sources: list[_Source],
    target,
    ruleset,
    config: PorterConfig,
    cache,
    stats: ScanStats,
    skipped: list[SkipNote],
    progress: Progress | None,
):
    """Project facts, triage and analysis of files already read: (reported, unreachable) findings."""
    statements = reach_statements(config)
    words: dict[str, SourceWords] = {}
    facts = project_facts(sources, cache, stats.jobs, (target, ruleset), statements.words(), progress, words)
    project = Project(facts, target, statements)
    findings, pending = _triage(sources, (target, ruleset), cache, stats, skipped, project, words)
    for done, (path, outcome, digest) in enumerate(_analyze_all(pending, target, ruleset, stats.jobs), start=1):
        if progress is not None:
            progress("analyzing", done, len(pending), path)
        if isinstance(outcome, SkipNote):
            skipped.append(outcome)
            continue
        findings.extend(outcome)
        if cache is not None and digest is not None:
            cache.store(path, digest, outcome)
    return assign_reach(findings, project, ruleset)


def _result(
    root: str,
    target,
    ruleset,
    reported: list[Finding],
    unreachable: list[Finding],
    skipped: list[SkipNote],
    stats: ScanStats,
    started: float,
) -> ScanResult:
    stats.skipped = len(skipped)
    stats.seconds = time.perf_counter() - started
    reported.sort(key=Finding.sort_key)
    unreachable.sort(key=Finding.sort_key)
    skipped.sort(key=lambda note: note.path)
    return ScanResult(root, target.name, reported, skipped, stats, rule_infos(ruleset), unreachable)


def assign_reach(findings: list[Finding], project: Project, ruleset) -> tuple[list[Finding], list[Finding]]:
    """Each finding's reach from the project analysis: (reported: target + unknown, dropped: nvidia_only, and
    rocm_only for rules whose premise is NVIDIA tuning (`premise: nvidia-tuning`) in code written for AMD).
    A finding whose premise is a convolution (`premise: convolution`) is no finding in a project running none."""
    rules = getattr(ruleset, "rules", ())
    opted_out = {rule.id for rule in rules if rule.get("platform_guards", True) is False}
    nvidia_tuning = {rule.id for rule in rules if rule.get("premise") == "nvidia-tuning"}
    about_convolutions = {rule.id for rule in rules if rule.get("premise") == "convolution"}
    reported: list[Finding] = []
    unreachable: list[Finding] = []
    for finding in findings:
        if "refusal_alternatives" in finding.data and not _refuses_target(finding, project):
            continue
        if finding.rule in about_convolutions and not project.may_convolve():
            continue
        if finding.reach != "nvidia_only" and finding.rule not in opted_out and finding.rule not in _BUILTIN_RULES:
            verdict = (
                project.reach_of_uses(finding.path, finding.line, finding.column, finding.data["reached_through"])
                if "reached_through" in finding.data  # an import failing where its names are used
                else project.reach(finding.path, finding.line, finding.column)
            )
            finding.reach, finding.reach_reason = verdict.reach, verdict.reason
        if finding.reach != "nvidia_only" and finding.rule in nvidia_tuning:
            written_for_amd = project.amd_only(finding.path, finding.line, finding.column)
            if written_for_amd is not None:
                finding.reach, finding.reach_reason = written_for_amd.reach, written_for_amd.reason
        (unreachable if finding.reach in DROPPED_REACH else reported).append(finding)
    return reported, unreachable


def _refuses_target(finding: Finding, project: Project) -> bool:
    """A refusal site (capability_predicate_refuses_amd) is a finding only where the project decides that its
    predicate is False on the target: the visitor sees the call, the helper's body may live in another module."""
    why = project.refusing_predicate(
        finding.path, finding.line, finding.data["predicate"], finding.data["refusal_alternatives"]
    )
    if why is None:
        return False
    finding.data["why_false"] = why
    return True


_BUILTIN_RULES = ("PT000", "PT001")


def scan_root(root: str | Path | Sequence[str | Path]) -> Path:
    """The directory a scan's paths (and its config) start from. One path: itself, or a file's directory.
    Several: the git top level holding them all (what pre-commit and CI name paths from), else their
    common directory."""
    paths = _as_paths(root)
    if len(paths) == 1:
        return paths[0] if paths[0].is_dir() else paths[0].parent
    common = Path(os.path.commonpath([str((p if p.is_dir() else p.parent).resolve()) for p in paths]))
    top = git_top_level(common)
    return top.resolve() if top is not None else common


def _as_paths(root: str | Path | Sequence[str | Path]) -> list[Path]:
    paths = [Path(root)] if isinstance(root, (str, Path)) else [Path(p) for p in root]
    if not paths:
        raise UsageError("no path to scan")
    for path in paths:
        if not path.exists():
            raise UsageError(f"{path}: no such file or directory")
    return paths


def _one_file(root: str | Path | Sequence[str | Path]) -> bool:
    paths = _as_paths(root)
    return len(paths) == 1 and not paths[0].is_dir()


def _discover(root: str | Path | Sequence[str | Path], options: DiscoverOptions):
    paths = _as_paths(root)
    return discover(paths[0], options) if len(paths) == 1 else discover_paths(paths, scan_root(paths), options)


def _declare_project(found) -> None:
    """The scanned tree, for value flow across modules (settings helpers); workers fork after this."""
    from porter.analyze.triton import flow

    root = Path(found.root)
    flow.set_project(root if root.is_dir() else root.parent, [f.path for f in found.files if f.kind == "python"])


def _as_target(target):
    from porter.targets import Target, get_target

    return target if isinstance(target, Target) else get_target(str(target))


def _discover_options(config: PorterConfig, ruleset) -> DiscoverOptions:
    glob_root = str(Path(config.source).resolve().parent) if config.source else None
    return DiscoverOptions(
        kinds=kinds_for(ruleset),
        exclude=config.exclude,
        include=config.include,
        max_file_bytes=config.max_file_bytes,
        glob_root=glob_root,
    )


def _jobs(jobs: int | None, config: PorterConfig) -> int:
    chosen = jobs or config.jobs or os.cpu_count() or 1
    return max(1, int(chosen))


# ---- triage: everything cheap, in the parent ---------------------------------------------------


@dataclass(frozen=True)
class Pending:
    path: str
    text: str
    digest: str
    aliases: dict[str, str] = field(default_factory=dict)  # project re-exports of library names
    words: tuple[str, ...] = ()  # names the user states are platform predicates (kept in the facts)
    package: str = ""  # the dotted package the scanned root is (project_facts.package_of_root)
    rules: frozenset[str] | None = None  # the only rules that may match (porter.analyze.prefilter); None: all


@dataclass
class _Source:
    """One file read for the scan: its bytes' sha256 and, once needed, its decoded text."""

    source: SourceFile
    data: bytes
    digest: str
    text: str | SkipNote | None = None

    def decoded(self) -> str | SkipNote:
        if self.text is None:
            self.text = decode(self.source.path, self.data)
        return self.text


def prefilter_for(ruleset) -> Callable[[str], bool]:
    """A test `text -> bool`: may any rule match this text? (no tokens: every text may)."""
    if callable(getattr(ruleset, "may_match", None)):
        return ruleset.may_match
    tokens = tuple(sorted(set(getattr(ruleset, "prefilter_tokens", None) or ())))
    if not tokens:
        return lambda text: True
    return lambda text: any(token in text for token in tokens)


GENERATED_MARK = b"# @generated by porter"


def _read_all(
    files: list[SourceFile], stats: ScanStats, skipped: list[SkipNote], progress: Progress | None = None
) -> list[_Source]:
    """Every file's bytes and sha256 (porter's own generated files are passed over)."""
    out = []
    for done, source in enumerate(files, start=1):
        if progress is not None:
            progress("reading", done, len(files), source.path)
        data = read_bytes(source)
        if isinstance(data, SkipNote):
            skipped.append(data)
            continue
        stats.bytes += len(data)
        stats.lines += _line_count(data)
        if data.startswith(GENERATED_MARK):
            skipped.append(SkipNote(source.path, "generated by porter (its shim answers for every target)"))
            continue
        out.append(_Source(source, data, hashlib.sha256(data).hexdigest()))
    return out


def _line_count(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def project_facts(
    sources: list[_Source],
    cache,
    jobs: int,
    init_args: tuple,
    words: tuple[str, ...] = (),
    progress: Progress | None = None,
    source_words_out: dict[str, SourceWords] | None = None,
) -> dict[str, dict]:
    """Every Python module's facts: from the cache while the file is unchanged, else one `ast` parse each.
    `source_words_out` receives, for each module parsed here, the words the rules' triggers read."""
    facts: dict[str, dict] = {}
    missing: list[Pending] = []
    stated = hashlib.sha256("\0".join(words).encode()).hexdigest()[:12] if words else ""
    packages: dict[Path, str] = {}  # scanned root -> the package it is: asked once, not per file
    for item in sources:
        if item.source.kind != "python":
            continue
        package = _package_of(item.source, packages)
        key = f"{item.digest}+{stated}" if stated else item.digest
        key = f"{key}@{package}" if package else key
        cached = cache.facts(item.source.path, key) if cache is not None else None
        if cached is not None:
            facts[item.source.path] = cached
            continue
        text = item.decoded()
        if isinstance(text, str):
            missing.append(Pending(item.source.path, text, key, words=words, package=package))
    launch_keys: dict[str, dict[str, bool]] = {}
    results = _map_files(_facts_chunk, missing, jobs, init_args, _facts_crash)
    for done, (path, found, digest, keys, module_words) in enumerate(results, 1):
        if progress is not None:
            progress("indexing", done, len(missing), path)
        facts[path] = found
        launch_keys[path] = keys
        if module_words is not None and source_words_out is not None:
            source_words_out[path] = module_words
        if cache is not None:
            cache.store_facts(path, digest, found)
    flow.preset_may_set(launch_keys)  # before the analysis workers fork: value flow's caller filter, known
    return facts


def _package_of(source: SourceFile, known: dict[Path, str]) -> str:
    """The dotted package the scanned root holding this file is: its path is relative to that root. `known`
    keeps each root's answer (a walk up its folders) for the scan's other files."""
    absolute = Path(source.absolute)
    depth = source.path.count("/") + 1
    if len(absolute.parents) < depth:
        return ""
    root = absolute.parents[depth - 1]
    if root not in known:
        known[root] = package_of_root(root)
    return known[root]


def _facts_chunk(chunk: list[Pending]) -> list:
    """Each module's facts and, from the same `ast` tree, which launch keys its launches may set (flow) and,
    for a scan with rules, the words their triggers read (porter.analyze.prefilter)."""
    out = []
    with_rules = _WORKER.get("ruleset") is not None
    for item in chunk:
        tree = parse_or_none(item.text)
        keys = flow.launch_keys_known(item.text, tree)
        found = module_facts(item.text, item.path, item.words, tree, item.package)
        module_words = source_words(tree, item.text) if tree is not None and with_rules else None
        out.append((item.path, found, item.digest, keys, module_words))
    return out


def _facts_crash(item: Pending):
    return item.path, empty_facts(item.path, item.package), item.digest, {}, None


def _map_files(fn: Callable, items: list[Pending], jobs: int, init_args: tuple, crashed: Callable) -> Iterable:
    """fn over chunks of `items`, in this process when the work is small, else in `jobs` processes."""
    if jobs <= 1 or len(items) < 2 or sum(len(item.text) for item in items) < IN_PROCESS_BYTES:
        _init_worker(*init_args)
        with _parser_gc():
            results = fn(items)
        yield from results
        return
    chunks = chunked(items, min(jobs, len(items)), lambda item: len(item.text))
    for results in parallel_map(fn, chunks, min(jobs, len(items)), init_args, crashed=crashed):
        yield from results


def _triage(
    sources: list[_Source],
    rules_for: tuple,
    cache,
    stats: ScanStats,
    skipped: list[SkipNote],
    project: Project,
    words: dict[str, SourceWords],
):
    """Findings straight from the cache, and the files left to analyse (with the rules that may match them)."""
    may_match = prefilter_for(rules_for[1])
    findings: list[Finding] = []
    pending: list[Pending] = []
    digests = {item.source.path: item.digest for item in sources}
    for item in sources:
        path = item.source.path
        aliases = project.aliases_for(path)
        imported = {dep: digests.get(dep, "") for dep in project.related_files(path)}
        digest = _findings_key(item.digest, aliases, imported)
        cached = cache.lookup(path, digest) if cache is not None else None
        if cached is not None:
            stats.cache_hits += 1
            findings.extend(cached)
            continue
        text = item.decoded()
        if isinstance(text, SkipNote):
            if item.source.kind == "python":  # Python porter cannot read is unchecked, not clean
                findings.append(undecodable_source(item, rules_for[0], text))
            else:
                skipped.append(text)
            continue
        rules = _rules_that_may_match(text, words.get(path), aliases, *rules_for)
        if rules is None and not may_match(text):  # no ast words: the text tokens alone decide
            rules = frozenset()
        if rules is not None and not rules:  # no rule can match: no parse, no findings
            stats.prefiltered += 1
            if cache is not None:
                cache.store(path, digest, [])
        else:
            pending.append(Pending(path, text, digest, aliases, rules=rules))
    stats.analyzed = len(pending)
    return findings, pending


def _rules_that_may_match(
    text: str, words: SourceWords | None, aliases: dict[str, str], target, ruleset
) -> frozenset[str] | None:
    """The ids of the rules whose text tokens and `ast` trigger both hold (porter.analyze.prefilter); None when
    the module has no `ast` words (facts from the cache, or ast rejected it): then every rule is tried.
    No rule left but a file the engine would report as unparsable (PT000) still goes to it."""
    from porter.analyze import engine

    if words is None or not hasattr(ruleset, "rules"):
        return None
    rules = engine._target_rules(target, ruleset)
    triggered = possible_rules(rules, words.with_project_aliases(aliases))  # set lookups: cheaper than the text
    found = frozenset(r.id for r in rules if r.id in triggered and any(t in text for t in r.tokens))
    if not found and engine.parse_refused(text) and any(t in text for r in rules for t in r.tokens):
        return None
    return found


def _findings_key(digest: str, aliases: dict[str, str], imported: dict[str, str] | None = None) -> str:
    """A file's findings depend on its text, on what the project's re-exports bind its imports to, and on
    the project modules it imports or is imported by (value flow follows settings helpers there: an edit to one must
    re-analyse the launches it feeds, an edit to a launch its helper's finding)."""
    if not aliases and not imported:
        return digest
    bound = json.dumps([sorted(aliases.items()), sorted((imported or {}).items())], separators=(",", ":"))
    return f"{digest}+{hashlib.sha256(bound.encode()).hexdigest()[:16]}"


# ---- analysis: in-process or in a pool of worker processes -------------------------------------

_WORKER: dict[str, Any] = {}
# libcst builds millions of small acyclic objects per parse; with the default thresholds the cyclic
# collector keeps re-walking every tree and index still alive (value flow keeps a few dozen), which
# cost a third of a cold scan. Rare collections are enough: the garbage here is freed by refcounting.
_GC_THRESHOLDS = (200_000, 50, 100)


def _init_worker(target, ruleset) -> None:
    _WORKER["target"], _WORKER["ruleset"] = target, ruleset


def _init_pool_worker(target, ruleset) -> None:
    """A worker process: the rule set and modules it inherited never become garbage, and its own
    collections are rare (see _GC_THRESHOLDS)."""
    _init_worker(target, ruleset)
    gc.freeze()
    gc.set_threshold(*_GC_THRESHOLDS)


@contextlib.contextmanager
def _parser_gc() -> Iterator[None]:
    """Rare cyclic collections while this process parses (restored after: the caller's process is not ours)."""
    before = gc.get_threshold()
    gc.set_threshold(*_GC_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)


def _analyze_one(item: Pending):
    from porter.analyze import analyze_source

    try:
        findings = analyze_source(
            item.text,
            item.path,
            _WORKER["target"],
            _WORKER["ruleset"],
            aliases=item.aliases,
            keep_unreachable=True,
            only=item.rules,
        )
        return item.path, findings, item.digest
    except Exception as error:  # a rule bug must not cost the rest of the scan; it is reported, not cached
        if os.environ.get("PORTER_DEBUG"):
            raise
        reason = f"internal error in the analyzer ({type(error).__name__}: {error}); please report it"
        return _unchecked(item, _WORKER["target"], reason)


def _analyze_chunk(chunk: list[Pending]) -> list:
    return [_analyze_one(item) for item in chunk]


def _analyze_all(pending: list[Pending], target, ruleset, jobs: int) -> Iterable:
    yield from _map_files(_analyze_chunk, pending, jobs, (target, ruleset), crashed_analysis(target))


def crashed_analysis(target) -> Callable[[Pending], tuple]:
    """What a file that kills its analysis process becomes: a PT001 error finding, uncached."""
    reason = "the analyzer process crashed on this file (please report it); the rest of the scan is complete"
    return functools.partial(_unchecked, target=target, reason=reason)


def _unchecked(item: Pending, target, reason: str):
    """A file the analysis could not finish: a PT001 error finding, never cached (no digest), so the scan
    fails closed and the next run tries the file again."""
    from porter.analyze.engine import analyzer_failure

    return item.path, [analyzer_failure(item.path, target, f"not checked: {reason}")], None


def undecodable_source(item: _Source, target, note: SkipNote) -> Finding:
    """A Python file that is not UTF-8 text (a PEP 263 coding line, binary bytes): porter reads and writes UTF-8
    only, so the file goes unchecked, a PT001 error that fails the scan rather than a quiet skip."""
    from porter.analyze.engine import analyzer_failure

    try:
        declared, _ = tokenize.detect_encoding(io.BytesIO(item.data).readline)
    except SyntaxError:
        declared = ""
    said = f", it declares {declared}" if declared and declared != "utf-8" else ""
    why = f"not checked: {note.reason}{said}; porter reads UTF-8 source only: re-encode it as UTF-8 or exclude it"
    return analyzer_failure(item.source.path, target, why)


def chunked(items: list, jobs: int, weight: Callable[[Any], int]) -> list[list]:
    """About four chunks per process, balanced by weight: biggest first, dealt round-robin."""
    count = max(1, min(len(items), jobs * 4))
    chunks: list[list] = [[] for _ in range(count)]
    for index, item in enumerate(sorted(items, key=weight, reverse=True)):
        chunks[index % count].append(item)
    return [chunk for chunk in chunks if chunk]


def _pool(jobs: int, init_args: tuple) -> ProcessPoolExecutor:
    """Worker processes (fork where available: the rule set is inherited, not pickled)."""
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() and sys.platform != "darwin" else "spawn"
    context = multiprocessing.get_context(method)
    return ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_init_pool_worker, initargs=init_args)


def parallel_map(fn: Callable, chunks: list, jobs: int, init_args: tuple, crashed: Callable | None = None) -> Iterable:
    """fn(chunk) for each chunk, in order, in `jobs` processes.

    A worker that dies (a native crash in the parser, say) breaks the whole pool; then the chunks
    not yet returned run again one file per fresh process, and the file that kills its process
    becomes `crashed(item)` instead of ending the scan.
    """
    returned = 0
    try:
        with _pool(jobs, init_args) as pool:
            for result in pool.map(fn, chunks):
                returned += 1
                yield result
    except BrokenProcessPool:
        if crashed is None:
            raise
        for chunk in chunks[returned:]:
            yield _isolated(fn, chunk, init_args, crashed)


def _isolated(fn: Callable, chunk: list, init_args: tuple, crashed: Callable) -> list:
    out = []
    for item in chunk:
        try:
            with _pool(1, init_args) as pool:
                out.extend(pool.submit(fn, [item]).result())
        except BrokenProcessPool:
            out.append(crashed(item))
    return out


# ---- cache -------------------------------------------------------------------------------------


class ScanCache:
    """Findings per file path, valid while the file's sha256 is unchanged.

    One JSON file per (porter version, rule set fingerprint, target facts), so a change in any of them
    starts from an empty cache. JSON, not pickle: a cache directory inside a cloned repository is
    untrusted input, and a corrupt or foreign file only costs a cold scan.
    """

    def __init__(self, directory: Path, key: str, stats: ScanStats) -> None:
        self.directory = directory
        self.file = directory / f"scan-{key}.json"
        self.stats = stats
        self.entries: dict[str, dict] = {}
        self.dirty = False

    @classmethod
    def open(cls, directory: Path, ruleset, target, stats: ScanStats) -> ScanCache:
        fingerprint = str(getattr(ruleset, "fingerprint", "") or "")
        # the target's name and every fact of it: a corrected specs.yaml figure must not serve stale findings
        key_text = "\0".join(
            (str(CACHE_FORMAT), __version__, _analyzer_fingerprint(), fingerprint, target.name, repr(target))
        )
        cache = cls(directory, hashlib.sha256(key_text.encode()).hexdigest()[:24], stats)
        cache.entries = cache._load()
        return cache

    def _load(self) -> dict[str, dict]:
        try:
            document = json.loads(self.file.read_text(encoding="utf-8"))
            entries = document["entries"]
            return entries if isinstance(entries, dict) else {}
        except (OSError, ValueError, KeyError, TypeError):
            return {}

    def _mac(self, path: str, digest: str, payload, kind: str = "findings") -> str:
        """This user's MAC of an entry: one committed to a repository (forged) or edited does not
        verify and is a miss, so a cache cannot hide findings."""
        message = "\0".join((self.file.name, kind, path, digest, json.dumps(payload, sort_keys=True, default=str)))
        return hmac.new(_user_cache_key(), message.encode(), hashlib.sha256).hexdigest()

    def lookup(self, path: str, digest: str) -> list[Finding] | None:
        entry = self.entries.get(path)
        if not isinstance(entry, dict) or entry.get("sha256") != digest:
            return None
        if not hmac.compare_digest(str(entry.get("mac", "")), self._mac(path, digest, entry.get("findings"))):
            return None
        try:
            return [Finding(**record, path=path) for record in entry["findings"]]
        except (KeyError, TypeError):
            return None  # a corrupt entry is a miss

    def store(self, path: str, digest: str, findings: list[Finding]) -> None:
        records = []
        for finding in findings:
            record = finding.to_dict()
            record.pop("path")
            records.append(record)
        records = json.loads(json.dumps(records, default=str))  # as it will read back
        entry = self._entry(path)
        entry["sha256"], entry["findings"] = digest, records
        entry["mac"] = self._mac(path, digest, records)
        self.dirty = True

    def facts(self, path: str, digest: str) -> dict | None:
        """The module's project facts while its sha256 is unchanged (porter.analyze.project_facts)."""
        entry = self.entries.get(path)
        if not isinstance(entry, dict) or entry.get("facts_sha256") != digest:
            return None
        found = entry.get("facts")
        if not hmac.compare_digest(str(entry.get("facts_mac", "")), self._mac(path, digest, found, "facts")):
            return None  # forged facts could mark every finding unreachable
        return found if isinstance(found, dict) and found.get("format") == FACTS_FORMAT else None

    def store_facts(self, path: str, digest: str, facts: dict) -> None:
        facts = json.loads(json.dumps(facts, default=str))  # as it will read back
        entry = self._entry(path)
        entry["facts_sha256"], entry["facts"] = digest, facts
        entry["facts_mac"] = self._mac(path, digest, facts, "facts")
        self.dirty = True

    def _entry(self, path: str) -> dict:
        entry = self.entries.get(path)
        if not isinstance(entry, dict):
            entry = self.entries[path] = {}
        return entry

    def save(self) -> None:
        if not self.dirty:
            return
        try:
            _prepare_cache_dir(self.directory)
            text = json.dumps({"format": CACHE_FORMAT, "porter": __version__, "entries": self.entries}, default=str)
            atomic_write_text(self.file, text)
            _prune_old_cache_files(self.directory, keep=self.file)
        except OSError as error:
            self.stats.notes.append(f"cache not written ({self.directory}): {error.strerror or error}")


@functools.lru_cache(maxsize=1)
def _analyzer_fingerprint() -> str:
    """The sha256 of porter's own Python sources: an edited analyzer (an editable install, a patched wheel) keeps its
    version number, and must not be served the findings of the code it replaced."""
    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for source in sorted(package.rglob("*.py")):
        digest.update(source.relative_to(package).as_posix().encode() + b"\0")
        digest.update(source.read_bytes())
    return digest.hexdigest()


@functools.lru_cache(maxsize=1)
def _user_cache_key() -> bytes:
    """A random key private to this user (XDG cache dir, mode 0600); a per-process one when that
    cannot be kept, which leaves every cache unverified (a miss), never trusted."""
    path = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "porter" / "scan-cache.key"
    try:
        key = path.read_bytes()
    except OSError:
        key = b""
    if len(key) >= 32:
        return key
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(secrets.token_bytes(32))
        return path.read_bytes()
    except OSError:
        return secrets.token_bytes(32)


def _prepare_cache_dir(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    ignore = directory / ".gitignore"
    if not ignore.exists():
        atomic_write_text(ignore, "# created by porter: the scan cache is not source\n*\n")
    tag = directory / "CACHEDIR.TAG"
    if not tag.exists():
        atomic_write_text(tag, "Signature: 8a477f597d28d172789f06886806bc55\n# porter scan cache\n")


def _prune_old_cache_files(directory: Path, keep: Path) -> None:
    others = sorted(
        (path for path in directory.glob("scan-*.json") if path != keep), key=lambda path: path.stat().st_mtime
    )
    for stale in others[: max(0, len(others) - CACHE_FILES_KEPT)]:
        stale.unlink(missing_ok=True)


# ---- Triton kernel inventory (`porter scan --kernels`) -----------------------------------------


@dataclass
class KernelInventory:
    root: str
    target: str
    files: list[dict]  # TritonInventory.to_dict(target) of each file that defines or launches a kernel
    skipped: list[SkipNote]


def _inventory_of(text: str, path: str, target, aliases: dict[str, str] | None = None) -> dict:
    """The file's Triton inventory over the engine's cheap index (not libcst's metadata providers)."""
    import libcst

    from porter.analyze import engine
    from porter.analyze.index import build_index
    from porter.analyze.visitors import ModuleContext

    depth_of, limit = getattr(engine, "_nesting_depth", None), getattr(engine, "_MAX_NESTING", None)
    if depth_of and limit and depth_of(text) > limit:  # libcst's native parser would overflow its stack, uncatchably
        raise ValueError("brackets nested too deeply to parse safely")
    module = libcst.parse_module(text)
    index = build_index(module)
    for local, name in (aliases or {}).items():  # `from pkg.triton_utils import triton`: the project's re-export
        index.aliases[local] = {name}
    context = ModuleContext(path, text, module, index, target)
    return context.triton.to_dict(target)


def _inventory_crash_note(item: Pending):
    return item.path, SkipNote(item.path, "the inventory process crashed on this file (please report it)")


def _inventory_chunk(chunk: list[Pending]) -> list:
    out: list[tuple[str, dict | SkipNote]] = []
    for item in chunk:
        try:
            out.append((item.path, _inventory_of(item.text, item.path, _WORKER["target"], item.aliases)))
        except Exception as error:  # unparsable file or analyzer bug: a note, not a failed command
            if os.environ.get("PORTER_DEBUG"):
                raise
            out.append((item.path, SkipNote(item.path, f"no kernel inventory ({type(error).__name__}: {error})")))
    return out


def kernel_inventory(
    root: str | Path | Sequence[str | Path], target, config: PorterConfig | None = None, jobs: int | None = None
):
    """The Triton kernels, autotune configs and launches under `root`, with per-config estimates."""
    target = _as_target(target)
    config = config if config is not None else load_config(scan_root(root))
    found = _discover(root, _discover_options(config, None))
    skipped = list(found.skipped)
    jobs = _jobs(jobs, config)
    sources = _read_all(found.files, ScanStats(), skipped)
    statements = reach_statements(config)
    project = Project(project_facts(sources, None, jobs, (target, None), statements.words()), target, statements)
    pending = []
    for item in sources:
        text = item.decoded()
        if isinstance(text, SkipNote):
            skipped.append(text)
        elif "triton" in text:
            pending.append(Pending(item.source.path, text, "", project.aliases_for(item.source.path)))
    results = list(_map_files(_inventory_chunk, pending, jobs, (target, None), _inventory_crash_note))
    files = []
    for _path, outcome in sorted(results, key=lambda pair: pair[0]):
        if isinstance(outcome, SkipNote):
            skipped.append(outcome)
        elif outcome.get("kernels") or outcome.get("launches"):
            files.append(outcome)
    return KernelInventory(found.root, target.name, files, sorted(skipped, key=lambda note: note.path))
