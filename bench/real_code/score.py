"""Score porter on real code: precision per rule from hand labels, and recall on human ROCm ports.

    python bench/real_code/score.py                       # dev split, every target in packages.yaml
    python bench/real_code/score.py --split held_out      # once, at the end, by whoever labels it (spent)
    python bench/real_code/score.py --split held_out2     # the second held-out split, scored once at the end (spent)
    python bench/real_code/score.py --split held_out3     # the third held-out split, scored once at the end
    python bench/real_code/score.py --split held_out4     # the fourth held-out split, scored once at the end
    python bench/real_code/score.py --split held_out5     # the fifth held-out split, scored once at the end (spent)
    python bench/real_code/score.py --split held_out6     # the sixth held-out split, scored once at the end
    python bench/real_code/score.py --split held_out7     # the seventh held-out split, scored once at the end
    python bench/real_code/score.py --split held_out8     # the eighth held-out split, scored once at the end
    python bench/real_code/score.py --opt-in              # also the rules that are off by default
    python bench/real_code/score.py --findings DIR        # score stored scans (DIR/*.jsonl), no download;
                                                          # only rules the current catalog runs count
    python bench/real_code/score.py --dump DIR            # keep this run's scans as DIR/<pkg>.<target>.jsonl
    python bench/real_code/score.py --unlabelled PT202    # list unlabelled findings of a rule (dev only)

Packages are downloaded once into the cache (--cache, else $PORTER_REAL_CODE_CACHE, else
~/.cache/porter-real-code) and scanned with the analyzer as it is now (the scan cache under each
source tree makes re-runs fast until the rules or the analyzer change). Precision is TP / (TP + FP);
debatable labels are counted apart. "unlab" counts findings no label matches: new findings since the
labels were written. "gone T/F" counts labels whose finding is no longer reported: a gone true label is
a finding lost, a gone false label a false alarm fixed. Findings the analyzer marks nvidia_only are not
reported by porter, so they are not scored.

Fail closed: a package that cannot be downloaded, or port pairs whose trees are missing, are named in
the output ("not scored: ...", with how to get them) and the exit status is 1; the figures printed are
over what was scored.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from corpus import (  # noqa: E402
    HELD_OUT_SPLITS,
    PACKAGES_FILE,
    CorpusError,
    CorpusFinding,
    LabelIndex,
    fetch,
    labels_file,
    load_corpus,
    load_labels,
    read_findings,
    scan_package,
    write_findings,
)

from porter.records import DROPPED_REACH  # noqa: E402

OPT_IN = "opt-in"  # the select key that turns on every rule that is off by default


@dataclass
class RuleTally:
    findings: int = 0
    true: int = 0
    false: int = 0
    debatable: int = 0
    gone_true: int = 0
    gone_false: int = 0

    @property
    def unlabelled(self) -> int:
        return self.findings - self.true - self.false - self.debatable

    @property
    def precision(self) -> float | None:
        judged = self.true + self.false
        return self.true / judged if judged else None

    def add(self, other: RuleTally) -> None:
        for name in ("findings", "true", "false", "debatable", "gone_true", "gone_false"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def as_dict(self) -> dict:
        return {
            "findings": self.findings,
            "true": self.true,
            "false": self.false,
            "debatable": self.debatable,
            "unlabelled": self.unlabelled,
            "gone_true": self.gone_true,
            "gone_false": self.gone_false,
            "precision": self.precision,
        }


@dataclass
class TargetScore:
    target: str
    rules: dict[str, RuleTally] = field(default_factory=lambda: defaultdict(RuleTally))

    @property
    def overall(self) -> RuleTally:
        total = RuleTally()
        for tally in self.rules.values():
            total.add(tally)
        return total

    def as_dict(self) -> dict:
        return {"rules": {r: t.as_dict() for r, t in sorted(self.rules.items())}, "overall": self.overall.as_dict()}


def score(
    findings: Iterable[CorpusFinding],
    labels: LabelIndex,
    targets: Sequence[str],
    packages: set[str],
    rules: set[str] | None = None,
) -> dict[str, TargetScore]:
    """Per target, per rule tallies. `rules`: the rules that ran (labels of other rules are not 'gone')."""
    scores = {t: TargetScore(t) for t in targets}
    for finding in findings:
        if finding.target not in scores or finding.reach in DROPPED_REACH or finding.package not in packages:
            continue
        tally = scores[finding.target].rules[finding.rule]
        tally.findings += 1
        label = labels.lookup(finding)
        if label is not None:
            setattr(tally, label.verdict, getattr(tally, label.verdict) + 1)
    for target in targets:
        _count_gone(scores[target], labels, packages, target, rules)
    return scores


def _count_gone(
    result: TargetScore, labels: LabelIndex, packages: set[str], target: str, rules: set[str] | None
) -> None:
    for label in labels.unmatched(packages, [target]):
        if rules is not None and label.key.rule not in rules:
            continue
        if label.verdict == "true":
            result.rules[label.key.rule].gone_true += 1
        elif label.verdict == "false":
            result.rules[label.key.rule].gone_false += 1


# ---- running the scans ---------------------------------------------------------------------------------


def default_cache() -> Path:
    return Path(os.environ.get("PORTER_REAL_CODE_CACHE") or Path.home() / ".cache" / "porter-real-code")


def scan_corpus(
    packages, targets, cache: Path, select: Sequence[str], jobs: int, missing: dict[str, str] | None = None
) -> list[CorpusFinding]:
    """Scan every package for every target. A package that cannot be downloaded is not scored: its name
    and the reason go into `missing` (when given; else the error stops the run), so the table says so."""
    from porter.analyze import load_rules
    from porter.targets import get_target

    ruleset = load_rules(select=select) if select else load_rules()
    found: list[CorpusFinding] = []
    for package in packages:
        try:
            root = fetch(package, cache)
        except CorpusError as error:
            if missing is None:
                raise
            missing[package.name] = str(error)
            print(f"  not scored: {package.name}: {error}", file=sys.stderr)
            continue
        for target in targets:
            found.extend(scan_package(package, root, get_target(target).name, ruleset, jobs))
            print(f"  scanned {package.name} for {target}", file=sys.stderr)
    return found


def rules_that_ran(select: Sequence[str]) -> set[str]:
    from porter.analyze import load_rules

    return set((load_rules(select=select) if select else load_rules()).ids)


def read_stored(folder: Path) -> tuple[list[CorpusFinding], set[str]]:
    """The stored findings and the packages stored (a scan that found nothing is an empty file)."""
    found: list[CorpusFinding] = []
    paths = sorted(folder.glob("*.jsonl"))
    for path in paths:
        found.extend(read_findings(path))
    if not paths:
        raise CorpusError(f"{folder}: no stored findings (*.jsonl)")
    return found, {path.name.rsplit(".", 2)[0] for path in paths}


def dump(findings: Sequence[CorpusFinding], folder: Path, scanned: Iterable[tuple[str, str]]) -> None:
    """One file per scanned (package, target), empty when it found nothing: a later diff tells a package whose
    findings all went from one that was not scanned."""
    groups: dict[tuple[str, str], list[CorpusFinding]] = {key: [] for key in scanned}
    for finding in findings:
        groups.setdefault((finding.package, finding.target), []).append(finding)
    for (package, target), group in groups.items():
        write_findings(group, folder / f"{package}.{target}.jsonl")


# ---- human ports (bench/real_code/ports.py, by the ports bench) ------------------------------------------


def port_scores(targets: Sequence[str], split: str) -> dict:
    """`score_ports(targets, split=...) -> dict` from ports.py beside this file, when that bench exists.

    `split` is the same split as the packages' ("all": every pair). Its dict has "targets" -> target ->
    "overall" (recall_lines, false_alarms, ...) when the port trees are in its cache, else "missing" (pair
    ids) and "how_to_get"; an error of its own comes back as {"error": text}.
    """
    path = HERE / "ports.py"
    if not path.is_file():
        return {"split": split, "error": f"{path} not present"}
    spec = importlib.util.spec_from_file_location("real_code_ports", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("real_code_ports", module)
    spec.loader.exec_module(module)
    try:
        return module.score_ports(list(targets), split=split)
    except Exception as error:  # the ports bench failing must not hide the precision table
        return {"split": split, "error": f"{type(error).__name__}: {error}"}


# ---- printing -------------------------------------------------------------------------------------------


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def print_scores(scores: dict[str, TargetScore], split: str) -> None:
    for target, result in scores.items():
        print(f"\n{target} ({split})")
        print(f"{'rule':<8}{'found':>7}{'true':>6}{'false':>6}{'deb':>5}{'unlab':>7}{'prec':>7}{'gone T/F':>10}")
        for rule, t in sorted(result.rules.items()):
            print(
                f"{rule:<8}{t.findings:>7}{t.true:>6}{t.false:>6}{t.debatable:>5}{t.unlabelled:>7}"
                f"{_ratio(t.precision):>7}{f'{t.gone_true}/{t.gone_false}':>10}"
            )
        t = result.overall
        print(
            f"{'overall':<8}{t.findings:>7}{t.true:>6}{t.false:>6}{t.debatable:>5}{t.unlabelled:>7}"
            f"{_ratio(t.precision):>7}{f'{t.gone_true}/{t.gone_false}':>10}"
        )


def print_missing(missing: dict[str, str]) -> None:
    """Packages left out of the table: the figures above are over the others only."""
    for name, why in sorted(missing.items()):
        print(f"\nnot scored: {name}: {why}")


def print_ports(ports: dict | None) -> None:
    if ports is None:  # --no-ports
        return
    if "missing" in ports:
        print(f"\nhuman ports ({ports.get('split', '?')}): not scored, trees missing for {', '.join(ports['missing'])}")
        print("  " + str(ports.get("how_to_get", "")).replace("\n", "\n  "))
        return
    if "targets" not in ports:
        print(f"\nhuman ports ({ports.get('split', '?')}): not scored: {ports.get('error', 'no result')}")
        return
    print(
        f"\nhuman ports ({ports.get('split', '?')}): recall on human-changed lines, false alarms on human-fixed lines"
    )
    for target, result in ports["targets"].items():
        o = result.get("overall", {})
        print(
            f"{target:<8} pairs {o.get('pairs', '-'):>3}  recall {_ratio(o.get('recall_lines')):>5} "
            f"(hunks {_ratio(o.get('recall_hunks'))})  false alarms {_ratio(o.get('false_alarms')):>5}  "
            f"in-scope a+c recall {_ratio(o.get('in_scope_recall_lines')):>5} "
            f"(hunks {_ratio(o.get('in_scope_recall_hunks'))}, {o.get('scope_hunks', '-')} of {o.get('hunks', '-')})"
        )


def print_unlabelled(findings: Sequence[CorpusFinding], labels: LabelIndex, rule: str, limit: int) -> None:
    shown = 0
    for finding in findings:
        if finding.rule != rule or finding.reach in DROPPED_REACH or labels.lookup(finding) is not None:
            continue
        print(
            f"{finding.package} {finding.target} {finding.path}:{finding.line} n={finding.occurrence} "
            f"[{finding.severity}/{finding.reach}] {finding.text[:110]}\n    {finding.message[:160]}"
        )
        shown += 1
        if shown >= limit:
            break


def label_files(given: Sequence[Path] | None) -> list[Path]:
    if given:
        return list(given)
    held_out = (labels_file(split) for split in HELD_OUT_SPLITS)
    return [labels_file("dev")] + [path for path in held_out if path.is_file()]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", *HELD_OUT_SPLITS, "all"), default="dev")
    parser.add_argument("--targets", nargs="*", help="default: the targets in packages.yaml")
    parser.add_argument("--packages", nargs="*", help="only these packages of the split")
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--opt-in", action="store_true", help="also run the rules that are off by default")
    parser.add_argument("--findings", type=Path, help="score stored findings from this folder instead of scanning")
    parser.add_argument("--dump", type=Path, help="write this run's findings here")
    parser.add_argument(
        "--labels",
        type=Path,
        nargs="*",
        help="label files (default: labels.jsonl and, when they exist, the held-out splits' labels_held_out*.jsonl)",
    )
    parser.add_argument("--packages-file", type=Path, default=PACKAGES_FILE)
    parser.add_argument("--unlabelled", metavar="RULE", help="list unlabelled findings of RULE (dev split only)")
    parser.add_argument("--limit", type=int, default=40)
    parser.add_argument("--no-ports", action="store_true", help="skip the human-port recall")
    parser.add_argument("--json", action="store_true", help="print the scores as JSON")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    corpus = load_corpus(args.packages_file)
    targets = tuple(args.targets or corpus.targets)
    packages = [p for p in corpus.split(args.split) if not args.packages or p.name in args.packages]
    names = {p.name for p in packages}
    select = ["PT", OPT_IN] if args.opt_in else []
    missing: dict[str, str] = {}  # package -> why it could not be scanned
    if args.unlabelled and any(p.split in HELD_OUT_SPLITS for p in packages):
        print(
            "score.py: --unlabelled lists dev findings only: the held-out part is not to be looked at", file=sys.stderr
        )
        return 2
    if args.findings:  # stored scans: keep the rules the current catalog runs (with --opt-in: all of them)
        rules = rules_that_ran(select)
        stored, stored_packages = read_stored(args.findings)
        names &= stored_packages  # packages not stored were not scanned: their labels are not "gone"
        findings = [f for f in stored if f.rule in rules]
    else:
        findings = scan_corpus(packages, targets, args.cache or default_cache(), select, args.jobs, missing)
        rules = rules_that_ran(select)
        names -= set(missing)  # a package not scanned has no findings: its labels are not "gone"
    if args.dump:
        dump(findings, args.dump, [(name, target) for name in sorted(names) for target in targets])
    labels = LabelIndex([label for path in label_files(args.labels) for label in load_labels(path)])
    if args.unlabelled:
        print_unlabelled(findings, labels, args.unlabelled, args.limit)
        return 0
    scores = score(findings, labels, targets, names, rules)
    ports = None if args.no_ports else port_scores(targets, args.split)  # None: --no-ports
    if args.json:
        print(
            json.dumps(
                {
                    "split": args.split,
                    "targets": {t: s.as_dict() for t, s in scores.items()},
                    "missing_packages": missing,
                    "ports": ports,
                },
                indent=1,
                default=str,
            )
        )
        return 1 if missing or not _ports_scored(ports) else 0
    print_scores(scores, args.split)
    print_missing(missing)
    print_ports(ports)
    return 1 if missing or not _ports_scored(ports) else 0


def _ports_scored(ports: dict | None) -> bool:
    """True when the ports were skipped on purpose (--no-ports) or scored; missing trees or an error: False."""
    return ports is None or "targets" in ports


if __name__ == "__main__":
    try:
        sys.exit(main())
    except CorpusError as error:
        print(f"score.py: {error}", file=sys.stderr)
        sys.exit(2)
