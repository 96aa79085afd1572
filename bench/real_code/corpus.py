"""The real-code corpus as data: pinned packages, their scans, and hand labels that survive re-scans.

A finding's label key is (package, path, rule, normalised source line, occurrence): the line's text with
whitespace collapsed, and the finding's index among the findings of that package/path/rule/text for one
target, in source order. Line numbers are not part of the key, so labels stay attached when code above
a finding moves, when the analyzer changes, or when a package is re-extracted.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tarfile
import zipfile
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
PACKAGES_FILE = HERE / "packages.yaml"
LABELS_FILE = HERE / "labels.jsonl"  # dev split, written by the engineers who change the rules
VERDICTS = ("true", "false", "debatable")
# each held-out split is labelled once by an engineer who changes no rule, and scored once at the end
HELD_OUT_SPLITS = tuple(f"held_out{n}" for n in ("", 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17))
SPLITS = ("dev", *HELD_OUT_SPLITS)
ANY_TARGET = "*"


def labels_file(split: str) -> Path:
    """The label file of a split: the dev labels, or the held-out split's own file (never listed by --unlabelled)."""
    return LABELS_FILE if split == "dev" else HERE / f"labels_{split}.jsonl"


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    source: str
    split: str
    what: str = ""
    keep: tuple[str, ...] = ()  # archive folders (or files) whose Python files are scanned; () = all

    @property
    def requirement(self) -> str:
        return f"{self.name}=={self.version}"

    @property
    def dirname(self) -> str:
        return f"{self.name}-{self.version}"


@dataclass(frozen=True)
class Corpus:
    targets: tuple[str, ...]
    packages: tuple[Package, ...]

    def split(self, which: str) -> list[Package]:
        return [p for p in self.packages if which in ("all", p.split)]


@dataclass(frozen=True)
class LabelKey:
    package: str
    path: str
    rule: str
    text: str  # the finding's first source line, whitespace collapsed
    occurrence: int  # index among findings with the same package/path/rule/text, in source order


@dataclass(frozen=True)
class CorpusFinding:
    """One scan finding, as stored and scored. `reach` is the analyzer's platform verdict."""

    package: str
    target: str
    path: str
    line: int
    column: int
    rule: str
    severity: str
    reach: str
    text: str
    message: str
    occurrence: int = 0

    @property
    def key(self) -> LabelKey:
        return LabelKey(self.package, self.path, self.rule, self.text, self.occurrence)

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)


@dataclass(frozen=True)
class Label:
    key: LabelKey
    target: str  # ANY_TARGET or one target name: a target's own label wins over the shared one
    verdict: str  # true | false | debatable
    reason: str


class CorpusError(ValueError):
    """A malformed packages.yaml, labels file or stored scan: names the file and the entry."""


def normalise(line: str) -> str:
    return re.sub(r"\s+", " ", line).strip()


# ---- packages ---------------------------------------------------------------------------------------


def load_corpus(path: Path = PACKAGES_FILE) -> Corpus:
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    packages = []
    for i, entry in enumerate(raw.get("packages") or ()):
        missing = [k for k in ("name", "version", "source", "split") if k not in entry]
        if missing:
            raise CorpusError(f"{path}: packages[{i}]: missing {', '.join(missing)}")
        if entry["split"] not in SPLITS or entry["source"] != "pypi":
            raise CorpusError(f"{path}: packages[{i}]: split must be one of {SPLITS} and source pypi")
        packages.append(
            Package(
                entry["name"],
                str(entry["version"]),
                entry["source"],
                entry["split"],
                entry.get("what", ""),
                tuple(entry.get("keep") or ()),
            )
        )
    names = [p.name for p in packages]
    if len(set(names)) != len(names):
        raise CorpusError(f"{path}: a package is listed twice")
    return Corpus(tuple(raw["targets"]), tuple(packages))


def fetch(package: Package, cache: Path) -> Path:
    """The package's Python sources under <cache>/src (downloaded and extracted once)."""
    root = cache / "src" / package.dirname
    marker = root / ".extracted"
    if marker.is_file():
        return root
    archive = _download(package, cache / "pkgs")
    _extract(archive, root, package.keep)
    marker.write_text(archive.name + "\n")
    return root


def _archive_prefix(package: Package) -> str:
    return re.sub(r"[-_.]+", "_", package.name).lower() + "-" + package.version


def _find_archive(package: Package, into: Path) -> Path | None:
    prefix = _archive_prefix(package)
    for candidate in sorted(into.glob("*")):
        stem = re.sub(r"[-_.]+", "_", candidate.name.split("-")[0]).lower()
        rest = candidate.name[len(candidate.name.split("-")[0]) + 1 :]
        if f"{stem}-{rest}".startswith(prefix + "-") or f"{stem}-{rest}".startswith(prefix + ".tar"):
            if candidate.suffix in (".whl", ".gz", ".zip"):
                return candidate
    return None


def _download(package: Package, into: Path) -> Path:
    into.mkdir(parents=True, exist_ok=True)
    found = _find_archive(package, into)
    if found is not None:
        return found
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(into), package.requirement]
    done = subprocess.run(command, capture_output=True, text=True)
    found = _find_archive(package, into)
    if done.returncode != 0 or found is None:
        raise CorpusError(f"cannot download {package.requirement}: {done.stderr.strip()[-300:]}")
    return found


def _wanted(name: str, keep: tuple[str, ...]) -> bool:
    if not name.endswith(".py") or ".." in Path(name).parts or name.startswith("/"):
        return False
    # a folder keeps what is under it, a file itself; sdists put everything under NAME-VERSION/
    return not keep or any(f"/{k.rstrip('/')}/" in f"/{name}" or f"/{name}".endswith(f"/{k}") for k in keep)


def _extract(archive: Path, into: Path, keep: tuple[str, ...]) -> None:
    into.mkdir(parents=True, exist_ok=True)
    if archive.suffix == ".whl" or archive.suffix == ".zip":
        with zipfile.ZipFile(archive) as wheel:
            for name in wheel.namelist():
                if _wanted(name, keep):
                    wheel.extract(name, into)
        return
    with tarfile.open(archive) as sdist:
        members = [m for m in sdist.getmembers() if m.isfile() and _wanted(m.name, keep)]
        sdist.extractall(into, members=members, filter="data")


# ---- scans --------------------------------------------------------------------------------------------


def scan_package(package: Package, root: Path, target: str, ruleset, jobs: int = 2) -> list[CorpusFinding]:
    """Scan one extracted package for one target with the analyzer as it is now."""
    from porter.analyze.scan import scan_tree
    from porter.config import PorterConfig

    result = scan_tree(root, target, ruleset, jobs=jobs, use_cache=True, config=PorterConfig())
    lines = _LineReader(root)
    found = [
        CorpusFinding(
            package.name,
            target,
            f.path,
            f.line,
            f.column,
            f.rule,
            f.severity,
            getattr(f, "reach", "target"),
            lines.text(f.path, f.line),
            f.message,
        )
        for f in result.findings
    ]
    return number_occurrences(found)


class _LineReader:
    def __init__(self, root: Path):
        self.root, self.files = root, {}

    def text(self, path: str, line: int) -> str:
        if path not in self.files:
            try:
                self.files[path] = (self.root / path).read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                self.files[path] = []
        rows = self.files[path]
        return normalise(rows[line - 1]) if 0 < line <= len(rows) else ""


def number_occurrences(findings: Iterable[CorpusFinding]) -> list[CorpusFinding]:
    """Give each finding its occurrence index among equal (package, target, path, rule, text)."""
    ordered = sorted(findings, key=lambda f: (f.package, f.target, f.path, f.line, f.column, f.rule))
    seen: dict[tuple, int] = defaultdict(int)
    out = []
    for f in ordered:
        group = (f.package, f.target, f.path, f.rule, f.text)
        out.append(CorpusFinding(**{**asdict(f), "occurrence": seen[group]}))
        seen[group] += 1
    return out


def write_findings(findings: Iterable[CorpusFinding], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text("".join(f.to_json() + "\n" for f in findings), encoding="utf-8")
    tmp.replace(path)


def read_findings(path: Path) -> list[CorpusFinding]:
    """Stored findings (JSON lines); occurrences are recomputed, so hand-trimmed files stay consistent."""
    found = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            record.pop("occurrence", None)
            found.append(CorpusFinding(**record))
        except (json.JSONDecodeError, TypeError) as error:
            raise CorpusError(f"{path}:{number}: not a stored finding: {error}") from None
    return number_occurrences(found)


# ---- labels -------------------------------------------------------------------------------------------


def load_labels(path: Path = LABELS_FILE) -> list[Label]:
    labels, seen = [], set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        label = _parse_label(line, f"{path}:{number}")
        ident = (label.key, label.target)
        if ident in seen:
            raise CorpusError(f"{path}:{number}: a second label for the same finding and target")
        seen.add(ident)
        labels.append(label)
    return labels


def _parse_label(line: str, where: str) -> Label:
    try:
        raw = json.loads(line)
        key = LabelKey(raw["package"], raw["path"], raw["rule"], normalise(raw["text"]), int(raw.get("n", 0)))
        label = Label(key, raw.get("target", ANY_TARGET), raw["label"], raw["why"].strip())
    except (json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as error:
        raise CorpusError(f"{where}: not a label ({error!r})") from None
    if label.verdict not in VERDICTS:
        raise CorpusError(f"{where}: label must be one of {VERDICTS}, got {label.verdict!r}")
    if not label.reason:
        raise CorpusError(f"{where}: a label needs a one-line reason (why)")
    return label


def label_line(finding: CorpusFinding, verdict: str, reason: str, target: str = ANY_TARGET) -> str:
    record = {
        "package": finding.package,
        "path": finding.path,
        "rule": finding.rule,
        "text": finding.text,
        "n": finding.occurrence,
        "target": target,
        "label": verdict,
        "why": reason,
    }
    return json.dumps(record)


class LabelIndex:
    """Labels by key; a target's own label wins over the one shared by all targets."""

    def __init__(self, labels: Sequence[Label]):
        self.by_key: dict[tuple[LabelKey, str], Label] = {(label.key, label.target): label for label in labels}
        self.used: set[tuple[LabelKey, str]] = set()

    def lookup(self, finding: CorpusFinding) -> Label | None:
        for ident in ((finding.key, finding.target), (finding.key, ANY_TARGET)):
            label = self.by_key.get(ident)
            if label is not None:
                self.used.add(ident)
                return label
        return None

    def unmatched(self, packages: set[str], targets: Sequence[str]) -> Iterator[Label]:
        """Labels of these packages that no finding of these targets used (the finding is gone)."""
        for (key, target), label in self.by_key.items():
            if key.package not in packages or (target != ANY_TARGET and target not in targets):
                continue
            if (key, target) not in self.used:
                yield label
