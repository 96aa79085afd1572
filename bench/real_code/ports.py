"""Human ROCm ports as a yardstick: does porter flag the lines people changed, and stay quiet after?

Each pair in ports/pairs.yaml is a public commit in which a person moved NVIDIA-first Python/Triton code
onto AMD GPUs: the trees before and after it, restricted to the touched packages. ports/lines.json holds
the lines the human changed (path, line, hash of the stripped text), derived once from those trees:

- recall: the fraction of human-changed before-lines (and of hunks) on or near which `porter scan`
  reports a finding. Near: the finding's span, or a line its data points at (a value-flow origin, a
  launch site), meets the statement that holds the changed line; a changed `def` line also takes
  findings in the function's body. Pure insertions count at the line they were inserted after.
- false alarms: the fraction of human-fixed after-lines on or near which porter still warns
  (severity warning or error).
- rewrite: `--rewrite` runs `porter rewrite` on each before tree and prints which human hunks its
  patches touch; whether that is an equivalent change is judged by hand and kept in pairs.yaml.

Imports, comments, blank lines and docstrings are plumbing, not port lines: they are left out.
Trees are read from a cache directory (--cache, else $PORTER_PORTS_CACHE, else /work/corpus/ports);
nothing is fetched here.

    python bench/real_code/ports.py [--cache DIR] [--split dev|held_out|held_out3|held_out5|held_out6|held_out7|held_out8|held_out11|all] [--targets mi300x mi350x]
        [--pairs ID ...] [--misses] [--rewrite] [--json]
    python bench/real_code/ports.py extract --repos DIR [--split S]   # trees from local clones (git archive)
    python bench/real_code/ports.py lines                 # re-derive ports/lines.json from the trees
"""

from __future__ import annotations

import argparse
import ast
import difflib
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent / "ports"
PAIRS_FILE = HERE / "pairs.yaml"
LINES_FILE = HERE / "lines.json"
CLASSES_FILE = HERE / "hunk_classes.yaml"  # dev pairs
# held-out splits of port pairs; from held_out3 on, each is classified from the diff alone before porter runs on it
# (held_out's pairs are not classified)
HELD_OUT_SPLITS = ("held_out", "held_out3", "held_out5", "held_out6", "held_out7", "held_out8", "held_out11")
CLASSIFIED_HELD_OUT_SPLITS = HELD_OUT_SPLITS[1:]


def classes_file(split: str) -> Path:
    """The hunk-class file of a split (the dev file, or the held-out split's own)."""
    return CLASSES_FILE if split == "dev" else HERE / f"hunk_classes_{split}.yaml"


IN_SCOPE = ("a", "c")  # a: an idiom porter should detect; c: flagged, but on another line (b: not a detector's job)
DEFAULT_CACHE = Path("/work/corpus/ports")
TARGETS = ("mi300x", "mi350x")
WARNS = ("warning", "error")
# An inserted line that only threads a value through a signature or a call (`FP8_MAX: tl.constexpr,`,
# `FP8_MAX=fp8_max,`) is plumbing: the port is where the value is computed or used.
THREADING = re.compile(r"^\s*\*{0,2}\w+\s*(:[^=]+)?(=[^=].*)?,\s*(#.*)?$")


class PortsError(Exception):
    """A pair cannot be scored: a missing or mismatched tree, a failed scan."""


# ---------------------------------------------------------------------------------------------------
# records


@dataclass(frozen=True)
class Pair:
    id: str
    repo: str
    before: str
    after: str
    paths: tuple[str, ...]
    split: str
    description: str
    url: str = ""
    targets: tuple[str, ...] = TARGETS  # the targets the port is about (an fnuz fix is not about gfx950)
    still_wrong: dict | None = None  # target -> ["path:line", ...]: after-lines the port left wrong there
    rewrite: dict | None = None

    def left_wrong(self, target: str) -> set[str]:
        return set((self.still_wrong or {}).get(target, []))


@dataclass(frozen=True)
class LabelledLine:
    path: str
    line: int
    digest: str  # sha1 of the stripped text, 12 hex digits: proves the tree is the pinned one


@dataclass(frozen=True)
class Hunk:
    path: str
    before: tuple[LabelledLine, ...]  # changed lines, or the insertion anchor
    after: tuple[LabelledLine, ...]  # the human-fixed versions
    insertion: bool = False


@dataclass(frozen=True)
class Hit:
    """A finding reduced to what matching needs."""

    rule: str
    severity: str
    path: str
    lines: frozenset[int]  # its own span plus the lines its data points at in the same file


@dataclass
class PairScore:
    pair: str
    target: str
    lines: int = 0
    lines_hit: int = 0
    hunks: int = 0
    hunks_hit: int = 0
    hunks_hit_function: int = 0  # looser: a finding anywhere in the function that holds the hunk
    scope_lines: int = 0  # the same counts over the hunks classified a or c (hunk_classes.yaml)
    scope_lines_hit: int = 0
    scope_hunks: int = 0
    scope_hunks_hit: int = 0
    fixed: int = 0
    fixed_warned: int = 0
    still_wrong: int = 0  # after-lines the port left wrong on this target (not in `fixed`)
    still_wrong_warned: int = 0
    missed: list[LabelledLine] = field(default_factory=list)
    scope_missed: list[LabelledLine] = field(default_factory=list)  # first before-line of each missed a/c hunk
    warned: list[tuple[LabelledLine, str]] = field(default_factory=list)
    rules_hit: set[str] = field(default_factory=set)


def digest(text: str) -> str:
    return hashlib.sha1(text.strip().encode()).hexdigest()[:12]


def load_pairs(path: Path = PAIRS_FILE, split: str = "dev") -> list[Pair]:
    raw = yaml.safe_load(path.read_text())["pairs"]
    pairs = [
        Pair(**{**item, "paths": tuple(item["paths"]), "targets": tuple(item.get("targets", TARGETS))}) for item in raw
    ]
    return [p for p in pairs if split == "all" or p.split == split]


def load_classes(
    paths: Iterable[Path] = tuple(map(classes_file, ("dev", *CLASSIFIED_HELD_OUT_SPLITS))),
) -> dict[str, dict[tuple[str, int], dict]]:
    """pair -> (path, first before-line) -> {class, idiom, why, digest}, over the class files that exist.

    Fail closed: a pair classified in two files is refused (which one holds is not guessed).
    """
    classes: dict[str, dict[tuple[str, int], dict]] = {}
    for path in paths:
        if not path.exists():
            continue
        for pair, rows in yaml.safe_load(path.read_text())["pairs"].items():
            if pair in classes:
                raise PortsError(f"{path.name}: {pair} is classified in another hunk-class file too")
            classes[pair] = {(row["path"], row["line"]): row for row in rows}
    return classes


def hunk_classes(pair: str, hunks: list[Hunk], classes: dict[str, dict[tuple[str, int], dict]]) -> list[str] | None:
    """The class of each hunk of a classified pair (None: the pair is not classified, e.g. held out).

    Fail closed: a hunk without a class, a class naming no hunk, or a digest that does not match the
    hunk's first line means lines.json and hunk_classes.yaml drifted apart.
    """
    rows = classes.get(pair)
    if rows is None:
        return None
    keys = [(h.path, h.before[0].line) for h in hunks]
    unknown, unused = [k for k in keys if k not in rows], set(rows) - set(keys)
    if unknown or unused:
        raise PortsError(
            f"hunk_classes*.yaml: {pair} out of step with lines.json "
            f"(unclassified {unknown[:3]}, no such hunk {sorted(unused)[:3]})"
        )
    for hunk, key in zip(hunks, keys):
        if rows[key]["digest"] != hunk.before[0].digest:
            raise PortsError(f"hunk_classes*.yaml: {pair} {key[0]}:{key[1]} digest differs from lines.json")
    return [rows[k]["class"] for k in keys]


def load_lines(path: Path = LINES_FILE) -> dict[str, list[Hunk]]:
    if not path.exists():
        return {}
    return {pair: [_hunk_from_json(h) for h in hunks] for pair, hunks in json.loads(path.read_text()).items()}


def _hunk_from_json(item: dict) -> Hunk:
    def side(rows):
        return tuple(LabelledLine(item["path"], line, dig) for line, dig in rows)

    return Hunk(item["path"], side(item["before"]), side(item["after"]), item.get("insertion", False))


def _hunk_to_json(hunk: Hunk) -> dict:
    return {
        "path": hunk.path,
        "insertion": hunk.insertion,
        "before": [[x.line, x.digest] for x in hunk.before],
        "after": [[x.line, x.digest] for x in hunk.after],
    }


# ---------------------------------------------------------------------------------------------------
# trees


def tree(cache: Path, pair: Pair, side: str) -> Path:
    return cache / pair.id / side


def missing_trees(cache: Path, pairs: Iterable[Pair]) -> list[Pair]:
    return [p for p in pairs if not (tree(cache, p, "before").is_dir() and tree(cache, p, "after").is_dir())]


def how_to_get(cache: Path, pairs: list[Pair]) -> str:
    repos = sorted({p.repo for p in pairs})
    clones = "\n".join(f"  git clone https://github.com/{r} REPOS/{r.replace('/', '+')}" for r in repos)
    return (
        f"missing trees in {cache}: {', '.join(p.id for p in pairs)}\n"
        f"get them with:\n{clones}\n  python bench/real_code/ports.py extract --repos REPOS --cache {cache}"
    )


def git_dir(repos: Path, repo: str) -> Path | None:
    owner, name = repo.split("/")
    for candidate in (repos / f"{owner}+{name}" / "repo", repos / f"{owner}+{name}", repos / name):
        if candidate.exists():
            return candidate
    return None


def extract(pair: Pair, source: Path, cache: Path) -> None:
    """Before and after trees of the pair's paths, from a local clone (no network)."""
    for side, commit in (("before", pair.before), ("after", pair.after)):
        dest = tree(cache, pair, side)
        dest.mkdir(parents=True, exist_ok=True)
        present = [p for p in pair.paths if _exists_at(source, commit, p)]
        archive = subprocess.run(
            ["git", "-C", str(source), "archive", commit, *present], capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)


def _exists_at(source: Path, commit: str, path: str) -> bool:
    return (
        subprocess.run(["git", "-C", str(source), "cat-file", "-e", f"{commit}:{path}"], capture_output=True).returncode
        == 0
    )


def python_files(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_text(encoding="utf-8", errors="replace")
        for p in sorted(root.rglob("*.py"))
        if p.is_file()
    }


# ---------------------------------------------------------------------------------------------------
# the human change as lines


def derive_hunks(before_root: Path, after_root: Path) -> list[Hunk]:
    """Port hunks of every Python file present on both sides; new and deleted files are not ports."""
    before, after = python_files(before_root), python_files(after_root)
    hunks: list[Hunk] = []
    for path in sorted(before.keys() & after.keys()):
        if before[path] != after[path]:
            hunks.extend(_file_hunks(path, before[path], after[path]))
    return hunks


def _file_hunks(path: str, old: str, new: str) -> Iterator[Hunk]:
    old_lines, new_lines = old.splitlines(), new.splitlines()
    old_plumbing, new_plumbing = plumbing_lines(old), plumbing_lines(new)
    new_helpers = top_level_definitions(new)
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        after = _labelled(path, new_lines, range(j1, j2), new_plumbing)
        if tag == "insert":
            before = _anchor(path, old_lines, i1, old_plumbing)
            if (
                after
                and before
                and not _only_new_definitions(after, new_helpers, j1 + 1, j2)
                and not all(THREADING.match(new_lines[x.line - 1]) for x in after)
            ):
                yield Hunk(path, before, after, insertion=True)
            continue
        before = _labelled(path, old_lines, range(i1, i2), old_plumbing)
        if before:
            yield Hunk(path, before, after)


def _labelled(path: str, lines: list[str], indices: range, plumbing: set[int]) -> tuple[LabelledLine, ...]:
    return tuple(LabelledLine(path, i + 1, digest(lines[i])) for i in indices if i + 1 not in plumbing)


def _anchor(path: str, lines: list[str], index: int, plumbing: set[int]) -> tuple[LabelledLine, ...]:
    """The nearest port line above an insertion point: the statement the new code follows."""
    for i in range(index - 1, -1, -1):
        if i + 1 not in plumbing:
            return (LabelledLine(path, i + 1, digest(lines[i])),)
    return ()


def plumbing_lines(source: str) -> set[int]:
    """1-based lines that are blank, comments, imports or docstrings."""
    lines = source.splitlines()
    out = {i + 1 for i, text in enumerate(lines) if not text.strip() or text.strip().startswith("#")}
    try:
        module = ast.parse(source)
    except SyntaxError:
        return out
    for node in ast.walk(module):
        if isinstance(node, (ast.Import, ast.ImportFrom)) or _is_docstring(node):
            out.update(range(node.lineno, node.end_lineno + 1))
    return out


def top_level_definitions(source: str) -> list[tuple[int, int]]:
    """(first, last) lines of module-level functions and classes."""
    try:
        module = ast.parse(source)
    except SyntaxError:
        return []
    return [
        (min([node.lineno] + [d.lineno for d in node.decorator_list]), node.end_lineno)
        for node in module.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    ]


def _only_new_definitions(
    lines: tuple[LabelledLine, ...], definitions: list[tuple[int, int]], first: int, last: int
) -> bool:
    """An insertion that only adds whole module-level helpers (`def is_hip()`) is plumbing."""
    inside = [(a, b) for a, b in definitions if first <= a and b <= last]
    return all(any(a <= x.line <= b for a, b in inside) for x in lines)


def _is_docstring(node: ast.AST) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


# ---------------------------------------------------------------------------------------------------
# where a line sits: its statement, and for a def line the whole function


class Regions:
    """Statement regions of one file: the lines a finding must meet to count as on a changed line."""

    def __init__(self, source: str) -> None:
        self._spans: list[tuple[int, int, int, int]] = []  # (start, end, body_start, body_end)
        self._functions: list[tuple[int, int]] = []
        try:
            module = ast.parse(source)
        except SyntaxError:
            return
        for node in ast.walk(module):
            if isinstance(node, ast.stmt):
                self._spans.append(_header_span(node))
        self._functions = _function_spans(source)

    def function(self, line: int) -> set[int]:
        """The innermost function holding the line (its statement at module level)."""
        holding = [f for f in self._functions if f[0] <= line <= f[1]]
        if not holding:
            return self.around(line)
        start, end = min(holding, key=lambda f: f[1] - f[0])
        return set(range(start, end + 1))

    def around(self, line: int) -> set[int]:
        """The innermost statement (header only, for compound ones) holding the line; a def line adds its body."""
        holding = [s for s in self._spans if s[0] <= line <= s[1]]
        if not holding:
            return {line}
        start, end, body_start, body_end = min(holding, key=lambda s: s[1] - s[0])
        region = set(range(start, end + 1))
        if body_start:
            region.update(range(body_start, body_end + 1))
        return region


def _function_spans(source: str) -> list[tuple[int, int]]:
    try:
        module = ast.parse(source)
    except SyntaxError:
        return []
    return [
        (min([n.lineno] + [d.lineno for d in n.decorator_list]), n.end_lineno)
        for n in ast.walk(module)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]


def _header_span(node: ast.stmt) -> tuple[int, int, int, int]:
    body = getattr(node, "body", None)
    if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
        header_end = max(node.lineno, body[0].lineno - 1)
        is_def = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        return (first, header_end, body[0].lineno if is_def else 0, node.end_lineno if is_def else 0)
    return (node.lineno, node.end_lineno, 0, 0)


# ---------------------------------------------------------------------------------------------------
# porter


def scan(root: Path, target: str) -> list[Hit]:
    """`porter scan --format json` on a tree, as a user runs it (its own cache in a temporary dir)."""
    with tempfile.TemporaryDirectory(prefix="porter-ports-") as out:
        report = Path(out) / "findings.json"
        command = [
            sys.executable,
            "-m",
            "porter",
            "scan",
            str(root),
            "--target",
            target,
            "--format",
            "json",
            "--fail-on",
            "never",
            "--no-cache",
            "--output",
            str(report),
        ]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0 or not report.exists():
            raise PortsError(
                f"porter scan {root} --target {target} failed ({done.returncode}): {done.stderr.strip()[-400:]}"
            )
        payload = json.loads(report.read_text())
    return [to_hit(f) for f in payload["findings"]]


def to_hit(finding: dict) -> Hit:
    own = set(range(finding["line"], max(finding["line"], finding.get("end_line") or finding["line"]) + 1))
    pointed = set(_pointed_lines(finding.get("data") or {}, finding["path"]))
    return Hit(finding["rule"], finding["severity"], finding["path"], frozenset(own | pointed))


def _pointed_lines(data, path: str) -> Iterator[int]:
    """Lines named anywhere in a finding's data (value-flow origins, launch sites) in the same file."""
    if isinstance(data, dict):
        line, where = data.get("line"), data.get("path", path)
        if isinstance(line, int) and where == path:
            yield from range(line, max(line, data.get("end_line") or line) + 1)
        for value in data.values():
            yield from _pointed_lines(value, path)
    elif isinstance(data, list):
        for value in data:
            yield from _pointed_lines(value, path)


# ---------------------------------------------------------------------------------------------------
# scoring


def check_digests(root: Path, lines: Iterable[LabelledLine]) -> None:
    files = python_files(root)
    for item in lines:
        text = files.get(item.path, "").splitlines()
        if item.line > len(text) or digest(text[item.line - 1]) != item.digest:
            raise PortsError(f"{root}: {item.path}:{item.line} is not the pinned line; re-extract this tree")


def hits_by_line(
    root: Path,
    hits: list[Hit],
    lines: Iterable[LabelledLine],
    severities: tuple[str, ...] | None = None,
    widen: str = "statement",
) -> dict[LabelledLine, list[Hit]]:
    files = python_files(root)
    regions = {path: Regions(text) for path, text in files.items()}
    by_path: dict[str, list[Hit]] = {}
    for hit in hits:
        if severities is None or hit.severity in severities:
            by_path.setdefault(hit.path, []).append(hit)
    out = {}
    for item in lines:
        where = regions[item.path]
        region = where.function(item.line) if widen == "function" else where.around(item.line)
        out[item] = [h for h in by_path.get(item.path, []) if h.lines & region]
    return out


def score_pair(
    pair: Pair, hunks: list[Hunk], target: str, cache: Path, scanner=scan, classes: list[str] | None = None
) -> PairScore:
    before_root, after_root = tree(cache, pair, "before"), tree(cache, pair, "after")
    before_lines = [x for h in hunks for x in h.before]
    after_lines = [x for h in hunks for x in h.after]
    check_digests(before_root, before_lines)
    check_digests(after_root, after_lines)
    before_hits, after_hits = scanner(before_root, target), scanner(after_root, target)
    found = hits_by_line(before_root, before_hits, before_lines)
    nearby = hits_by_line(before_root, before_hits, before_lines, widen="function")
    still = hits_by_line(after_root, after_hits, after_lines, WARNS)
    score = PairScore(pair.id, target, lines=len(before_lines), hunks=len(hunks))
    for item, hits in found.items():
        if hits:
            score.lines_hit += 1
            score.rules_hit.update(h.rule for h in hits)
        else:
            score.missed.append(item)
    score.hunks_hit = sum(any(found[x] for x in h.before) for h in hunks)
    score.hunks_hit_function = sum(any(nearby[x] for x in h.before) for h in hunks)
    if classes is not None:
        _count_in_scope(score, [h for h, c in zip(hunks, classes) if c in IN_SCOPE], found)
    _count_fixed(score, still, pair.left_wrong(target))
    return score


def _count_in_scope(score: PairScore, hunks: list[Hunk], found: dict[LabelledLine, list[Hit]]) -> None:
    score.scope_hunks = len(hunks)
    score.scope_hunks_hit = sum(any(found[x] for x in h.before) for h in hunks)
    score.scope_lines = sum(len(h.before) for h in hunks)
    score.scope_lines_hit = sum(bool(found[x]) for h in hunks for x in h.before)
    score.scope_missed = [h.before[0] for h in hunks if h.before and not any(found[x] for x in h.before)]


def _count_fixed(score: PairScore, still: dict[LabelledLine, list[Hit]], left_wrong: set[str]) -> None:
    for item, hits in still.items():
        if f"{item.path}:{item.line}" in left_wrong:
            score.still_wrong += 1
            score.still_wrong_warned += bool(hits)
            continue
        score.fixed += 1
        if hits:
            score.fixed_warned += 1
            score.warned.append((item, ",".join(sorted({h.rule for h in hits}))))


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


COUNTS = (
    "lines",
    "lines_hit",
    "hunks",
    "hunks_hit",
    "hunks_hit_function",
    "scope_lines",
    "scope_lines_hit",
    "scope_hunks",
    "scope_hunks_hit",
    "fixed",
    "fixed_warned",
    "still_wrong",
    "still_wrong_warned",
)


def summarize(scores: list[PairScore]) -> dict:
    total = {key: sum(getattr(s, key) for s in scores) for key in COUNTS}
    return {
        "pairs": len({s.pair for s in scores}),
        **total,
        "recall_lines": _ratio(total["lines_hit"], total["lines"]),
        "recall_hunks": _ratio(total["hunks_hit"], total["hunks"]),
        "recall_hunks_function": _ratio(total["hunks_hit_function"], total["hunks"]),
        "in_scope_recall_lines": _ratio(total["scope_lines_hit"], total["scope_lines"]),
        "in_scope_recall_hunks": _ratio(total["scope_hunks_hit"], total["scope_hunks"]),
        "false_alarms": _ratio(total["fixed_warned"], total["fixed"]),
    }


def score_ports(
    targets: Iterable[str] = TARGETS, split: str = "dev", cache: Path | None = None, only: Iterable[str] | None = None
) -> dict:
    """Recall on human-changed lines and false alarms on human-fixed ones, per target and per pair.

    When trees are missing nothing is scored: the dict names them under "missing" and says how to get
    them under "how_to_get" (no "targets" key). A pinned line that does not match raises PortsError.
    """
    cache = cache or default_cache()
    pairs, lines = _chosen(load_pairs(split=split), only), load_lines()
    absent = missing_trees(cache, pairs)
    if absent:
        return {
            "split": split,
            "cache": str(cache),
            "missing": [p.id for p in absent],
            "how_to_get": how_to_get(cache, absent),
        }
    unlabelled = [p.id for p in pairs if p.id not in lines]
    if unlabelled:
        raise PortsError(f"no line data for {', '.join(unlabelled)}: run `ports.py lines`")
    result: dict = {"split": split, "cache": str(cache), "targets": {}, "rewrite": rewrite_judgments(pairs)}
    classes = load_classes()
    kinds = {p.id: hunk_classes(p.id, lines[p.id], classes) for p in pairs}
    for target in targets:
        scores = [score_pair(p, lines[p.id], target, cache, classes=kinds[p.id]) for p in pairs if target in p.targets]
        result["targets"][target] = {"overall": summarize(scores), "pairs": {s.pair: _pair_dict(s) for s in scores}}
    return result


def _chosen(pairs: list[Pair], only: Iterable[str] | None) -> list[Pair]:
    if not only:
        return pairs
    wanted = set(only)
    unknown = wanted - {p.id for p in pairs}
    if unknown:
        raise PortsError(f"no such pair in this split: {', '.join(sorted(unknown))}")
    return [p for p in pairs if p.id in wanted]


def rewrite_judgments(pairs: list[Pair]) -> dict:
    """The hand judgments of `porter rewrite` (pairs.yaml): counts and the one-line reasons."""
    verdicts = [str((p.rewrite or {}).get("equivalent", "unjudged")) for p in pairs]
    counts = {key: verdicts.count(key) for key in ("yes", "partial", "no", "unjudged")}
    return {**counts, "pairs": {p.id: p.rewrite for p in pairs if p.rewrite}}


def default_cache() -> Path:
    return Path(os.environ.get("PORTER_PORTS_CACHE", DEFAULT_CACHE))


def _pair_dict(score: PairScore) -> dict:
    return {
        **{key: getattr(score, key) for key in COUNTS},
        "rules_hit": sorted(score.rules_hit),
        "missed": [f"{x.path}:{x.line}" for x in score.missed],
        "scope_missed": [f"{x.path}:{x.line}" for x in score.scope_missed],
        "warned": [f"{x.path}:{x.line} {rules}" for x, rules in score.warned],
    }


# ---------------------------------------------------------------------------------------------------
# rewrite


def rewrite_touches(pair: Pair, hunks: list[Hunk], target: str, cache: Path) -> dict:
    """Which human hunks `porter rewrite` of the before tree edits.

    Patches stack (a later one's diff is against the tree with the earlier ones applied), so they are
    applied in order to a copy with `git apply` and the result is compared with the pristine tree.
    """
    with tempfile.TemporaryDirectory(prefix="porter-ports-rw-") as work:
        copy, out = Path(work) / "tree", Path(work) / "report"
        shutil.copytree(tree(cache, pair, "before"), copy)
        command = [
            sys.executable,
            "-m",
            "porter",
            "rewrite",
            str(copy),
            "--target",
            target,
            "--out",
            str(out),
            "--no-verify",
        ]
        done = subprocess.run(command, capture_output=True, text=True)
        report = out / "report.json"
        if not report.exists():
            raise PortsError(f"porter rewrite {pair.id} wrote no report ({done.returncode}): {done.stderr[-400:]}")
        patches = json.loads(report.read_text()).get("patches", [])
        failed = [p["id"] for p in patches if not _git_apply(copy, p.get("diff", ""))]
        edited = _edited_lines(python_files(tree(cache, pair, "before")), python_files(copy))
    touched = [h for h in hunks if any(x.line in edited.get(x.path, set()) for x in h.before)]
    return {
        "patches": len(patches),
        "not_applied": failed,
        "hunks": len(hunks),
        "hunks_touched": len(touched),
        "titles": sorted({p.get("title", "") for p in patches}),
        "edited": {path: sorted(lines) for path, lines in edited.items()},
    }


def _git_apply(root: Path, diff: str) -> bool:
    if not diff.strip():
        return True
    done = subprocess.run(
        ["git", "apply", "--whitespace=nowarn", "-"], cwd=root, input=diff, text=True, capture_output=True
    )
    return done.returncode == 0


def _edited_lines(before: dict[str, str], after: dict[str, str]) -> dict[str, set[int]]:
    """Before-tree lines a rewrite replaced or deleted, or inserted code after (new files are left out)."""
    out: dict[str, set[int]] = {}
    for path in sorted(before.keys() & after.keys()):
        old, new = before[path].splitlines(), after[path].splitlines()
        for tag, i1, i2, _, _ in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
            if tag in ("replace", "delete"):
                out.setdefault(path, set()).update(range(i1 + 1, i2 + 1))
            elif tag == "insert":
                out.setdefault(path, set()).add(max(i1, 1))
    return out


# ---------------------------------------------------------------------------------------------------
# command line


def print_table(result: dict) -> None:
    for target, block in result["targets"].items():
        print(f"\n== {target} ({result['split']}) ==")
        print(f"{'pair':<18} {'lines':>9} {'hunks':>9} {'in fn':>5} {'fixed warned':>13} {'left wrong':>10}  rules")
        rows = [*block["pairs"].items(), ("overall", block["overall"])]
        for pair, s in rows:
            print(
                f"{pair:<18} {s['lines_hit']:>4}/{s['lines']:<4} {s['hunks_hit']:>4}/{s['hunks']:<4} "
                f"{s['hunks_hit_function']:>5} {s['fixed_warned']:>6}/{s['fixed']:<6} "
                f"{s['still_wrong_warned']:>4}/{s['still_wrong']:<5}  {','.join(s.get('rules_hit', [])) or '-'}"
            )
        o = block["overall"]
        print(
            f"recall: lines {o['recall_lines']}, hunks {o['recall_hunks']} "
            f"(hunks with a finding in the same function {o['recall_hunks_function']}); "
            f"false alarms {o['false_alarms']}"
        )
        print(
            f"recall over the in-scope (a+c) hunks: lines {o['scope_lines_hit']}/{o['scope_lines']} = "
            f"{o['in_scope_recall_lines']}, hunks {o['scope_hunks_hit']}/{o['scope_hunks']} = {o['in_scope_recall_hunks']}"
        )
    judged = result.get("rewrite", {})
    if judged:
        print(
            f"\nporter rewrite equivalent to the human change (judged): yes {judged['yes']}, "
            f"partial {judged['partial']}, no {judged['no']}, unjudged {judged['unjudged']}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("command", nargs="?", default="score", choices=("score", "extract", "lines"))
    parser.add_argument(
        "--cache", type=Path, default=None, help=f"tree cache (default $PORTER_PORTS_CACHE, else {DEFAULT_CACHE})"
    )
    parser.add_argument(
        "--split", choices=("dev", *HELD_OUT_SPLITS, "all"), help="score: default dev; extract: default all"
    )
    parser.add_argument("--targets", nargs="+", default=list(TARGETS))
    parser.add_argument("--pairs", nargs="+", help="score: only these pair ids")
    parser.add_argument("--repos", type=Path, help="extract: directory of local clones")
    parser.add_argument("--json", action="store_true", help="score: print the result as JSON")
    parser.add_argument("--misses", action="store_true", help="score: list missed and still-warned lines")
    parser.add_argument("--rewrite", action="store_true", help="score: also run porter rewrite per pair")
    args = parser.parse_args(argv)
    args.cache = args.cache or default_cache()
    args.split = args.split or ("all" if args.command == "extract" else "dev")
    try:
        return {"score": _cmd_score, "extract": _cmd_extract, "lines": _cmd_lines}[args.command](args)
    except PortsError as error:
        print(f"ports: {error}", file=sys.stderr)
        return 2


def _cmd_score(args) -> int:
    result = score_ports(args.targets, args.split, args.cache, args.pairs)
    if "missing" in result:
        raise PortsError(result["how_to_get"])
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_table(result)
    if args.misses:
        _print_misses(result)
    if args.rewrite:
        _print_rewrite(args)
    return 0


def _print_misses(result: dict) -> None:
    for target, block in result["targets"].items():
        for pair, s in block["pairs"].items():
            for where in s["scope_missed"]:
                print(f"missed in-scope hunk  {target} {pair} {where}")
        for pair, s in block["pairs"].items():
            for where in s["missed"]:
                print(f"missed  {target} {pair} {where}")
            for where in s["warned"]:
                print(f"warned  {target} {pair} {where}")


def _print_rewrite(args) -> None:
    lines = load_lines()
    for pair in _chosen(load_pairs(split=args.split), args.pairs):
        touched = rewrite_touches(pair, lines[pair.id], args.targets[0], args.cache)
        judged = pair.rewrite or {}
        print(
            f"rewrite {pair.id}: {touched['hunks_touched']}/{touched['hunks']} human hunks edited by "
            f"{touched['patches']} patches ({len(touched['not_applied'])} did not apply); "
            f"judged {judged.get('equivalent', '?')}: {judged.get('reason', '')}"
        )


def _cmd_extract(args) -> int:
    if args.repos is None:
        raise PortsError("extract needs --repos DIR (local clones)")
    for pair in load_pairs(split=args.split):
        source = git_dir(args.repos, pair.repo)
        if source is None:
            print(f"ports: no clone of {pair.repo} under {args.repos}", file=sys.stderr)
            continue
        extract(pair, source, args.cache)
        print(f"extracted {pair.id}")
    return 0


def _cmd_lines(args) -> int:
    pairs = load_pairs(split="all")
    absent = missing_trees(args.cache, pairs)
    if absent:
        raise PortsError(how_to_get(args.cache, absent))
    data = {
        p.id: [_hunk_to_json(h) for h in derive_hunks(tree(args.cache, p, "before"), tree(args.cache, p, "after"))]
        for p in pairs
    }
    LINES_FILE.write_text(json.dumps(data, indent=1) + "\n")
    for pair, hunks in data.items():
        print(
            f"{pair}: {len(hunks)} hunks, {sum(len(h['before']) for h in hunks)} before-lines, "
            f"{sum(len(h['after']) for h in hunks)} after-lines"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
