"""Baseline vs patches, bisection, patch files and broken test commands, on a small pure-Python
repository (the replay plugin leaves torch alone there, so each test run takes about a second)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from porter.cli import main
from porter.records import FileEdit, Patch
from porter.targets import get_target
from porter.verify import VerifyOptions, verify_patches, verify_tree

TARGET = get_target("mi350x")
OPTIONS = VerifyOptions(jobs=0, timeout_s=120)

FILES = {
    "calc/__init__.py": "",
    "calc/arith.py": "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n",
    "calc/text.py": "def shout(s):\n    return s.upper()\n",
    "tests/test_arith.py": (
        "from calc.arith import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
        "def test_mul():\n    assert mul(2, 3) == 6\n"
    ),
    "tests/test_text.py": (
        "from calc.text import shout\n\n\ndef test_shout():\n    assert shout('a') == 'A'\n\n\n"
        "def test_whisper():\n    from calc.text import whisper\n    assert whisper('A') == 'a'\n"
    ),
}


def write_files(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return write_files(tmp_path / "calc-repo", FILES)


def edit(repo: Path, rel: str, old: str, new: str, patch_id: str, depends_on=()) -> Patch:
    before = (repo / rel).read_text(encoding="utf-8")
    assert old in before
    return Patch(
        patch_id,
        "codemod",
        [],
        patch_id,
        "test",
        [FileEdit(rel, before, before.replace(old, new))],
        depends_on=list(depends_on),
    )


def test_good_patch_is_accepted_with_newly_passing_tests(repo: Path) -> None:
    whisper = edit(
        repo,
        "calc/text.py",
        "    return s.upper()\n",
        "    return s.upper()\n\n\ndef whisper(s):\n    return s.lower()\n",
        "0001-whisper",
    )
    [verdict] = verify_patches(repo, [whisper], TARGET, OPTIONS)
    assert verdict.accepted, verdict.reasons
    assert verdict.newly_passing == ["tests/test_text.py::test_whisper"]
    # selection from the import graph: only the test file importing calc.text ran
    assert sorted(verdict.tests.passed) == ["tests/test_text.py::test_shout", "tests/test_text.py::test_whisper"]
    assert (repo / "calc/text.py").read_text() == FILES["calc/text.py"]  # the user's tree is untouched


def test_bisection_finds_the_bad_patch_among_good_ones(repo: Path) -> None:
    good_a = edit(
        repo,
        "calc/text.py",
        "    return s.upper()\n",
        "    return s.upper()\n\n\ndef whisper(s):\n    return s.lower()\n",
        "0001-good",
    )
    bad = edit(repo, "calc/arith.py", "return a * b", "return a * b + 1", "0002-bad")
    good_b = edit(repo, "calc/arith.py", "return a + b", "return b + a", "0003-good")
    verdicts = {v.patch_id: v for v in verify_patches(repo, [good_a, bad, good_b], TARGET, OPTIONS)}
    assert verdicts["0001-good"].accepted and verdicts["0003-good"].accepted
    assert not verdicts["0002-bad"].accepted
    assert verdicts["0002-bad"].reasons == [
        "test passed without these patches and fails with them: tests/test_arith.py::test_mul (assert 7 == 6)"
    ]


def test_a_later_round_reuses_the_tree_states_an_earlier_one_ran(repo: Path) -> None:
    """The rewrite loop verifies again each round under new patch ids: a state whose files, tests and options are
    the same is not run twice, and its verdict is the same; a patch whose text changed is run."""
    from porter.verify.core import verify_plan
    from porter.verify.memo import StateMemo

    def whisper(patch_id: str) -> Patch:
        return edit(
            repo,
            "calc/text.py",
            "    return s.upper()\n",
            "    return s.upper()\n\n\ndef whisper(s):\n    return s.lower()\n",
            patch_id,
        )

    states = StateMemo()
    first = verify_plan(repo, [whisper("0001-whisper")], TARGET, OPTIONS, states=states)
    ran = len(states.states)
    assert ran >= 2 and states.reused == 0  # the unpatched tree and the patched one, at least
    again = verify_plan(repo, [whisper("0003-PT101")], TARGET, OPTIONS, states=states)
    assert len(states.states) == ran and states.reused >= 2  # nothing new ran
    assert [v.accepted for v in again.verdicts] == [v.accepted for v in first.verdicts] == [True]
    assert again.verdicts[0].newly_passing == first.verdicts[0].newly_passing == ["tests/test_text.py::test_whisper"]
    breaks_shout = edit(repo, "calc/text.py", "return s.upper()", "return s.lower()", "0004-PT101")
    broken = verify_plan(repo, [breaks_shout], TARGET, OPTIONS, states=states)
    assert len(states.states) > ran and not broken.verdicts[0].accepted  # new content: run, and judged on it


def test_patch_that_does_not_apply_is_rejected_and_others_still_judged(repo: Path) -> None:
    stale = Patch("0001-stale", "codemod", [], "t", "r", [FileEdit("calc/arith.py", "old text\n", "new\n")])
    fine = edit(repo, "calc/arith.py", "return a + b", "return b + a", "0002-fine")
    stale_verdict, fine_verdict = verify_patches(repo, [stale, fine], TARGET, OPTIONS)
    assert not stale_verdict.accepted
    assert stale_verdict.reasons[0].startswith("does not apply: calc/arith.py: the file differs")
    assert fine_verdict.accepted


def test_patch_file_applied_with_git_apply(repo: Path, tmp_path: Path) -> None:
    patch = tmp_path / "break-add.patch"
    patch.write_text(
        "--- a/calc/arith.py\n+++ b/calc/arith.py\n@@ -1,4 +1,4 @@\n def add(a, b):\n-    return a + b\n"
        "+    return a - b\n \n \n",
        encoding="utf-8",
    )
    from porter.verify.workspace import patch_from_file

    record = patch_from_file(patch)
    [verdict] = verify_patches(repo, [record], TARGET, OPTIONS, patch_files={record.id: patch})
    assert not verdict.accepted
    assert "tests/test_arith.py::test_add" in verdict.reasons[0]
    garbage = tmp_path / "garbage.patch"
    garbage.write_text("--- a/calc/nope.py\n+++ b/calc/nope.py\n@@ -1 +1 @@\n-x\n+y\n", encoding="utf-8")
    record = patch_from_file(garbage)
    [verdict] = verify_patches(repo, [record], TARGET, OPTIONS, patch_files={record.id: garbage})
    assert not verdict.accepted and "calc/nope.py" in verdict.reasons[0]


def test_test_command_that_cannot_start_leaves_the_tree_unverified(repo: Path) -> None:
    options = VerifyOptions(jobs=0, test_cmd=("definitely-not-a-command-porter",))
    verdict = verify_tree(repo, TARGET, options)
    assert (verdict.accepted, verdict.status) == (False, "unverified")  # no verdict on the code
    assert verdict.reasons == [
        "the baseline test run failed (the test command cannot start: definitely-not-a-command-porter: No such "
        "file or directory): set [tool.porter.verify] test_cmd to the command that runs this project's tests"
    ]


def test_porter_verify_exits_2_when_the_test_command_cannot_start(repo: Path, tmp_path: Path, capsys) -> None:
    """Verification that cannot run is no verdict on the code: exit 2 with the fix, as `porter rewrite` does,
    for the tree and for patches alike, and no verdict file is written."""
    patch = tmp_path / "0001-noop.patch"
    patch.write_text(
        "--- a/calc/arith.py\n+++ b/calc/arith.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a + b\n"
        "+    return b + a\n",
        encoding="utf-8",
    )
    report = tmp_path / "verdicts.json"
    for extra in ([], ["--patch", str(patch)]):
        args = ["verify", str(repo), "--jobs", "0", "--test-cmd", "definitely-not-a-command-porter", "-q"]
        assert main([*args, *extra, "--output", str(report)]) == 2
        err = capsys.readouterr().err
        assert "cannot verify: the baseline test run failed (the test command cannot start" in err
        assert "set [tool.porter.verify] test_cmd" in err and "Traceback" not in err
        assert not report.exists()


def test_test_command_timeout_leaves_the_tree_unverified(repo: Path) -> None:
    options = VerifyOptions(jobs=0, timeout_s=1, test_cmd=(sys.executable, "-c", "import time; time.sleep(30)"))
    verdict = verify_tree(repo, TARGET, options)
    assert verdict.status == "unverified"
    assert verdict.reasons[0].startswith("the baseline test run timed out after 1 s: raise [tool.porter.verify]")
    assert verdict.tests.timed_out


@pytest.mark.parametrize(
    ("tests", "expected"),
    [
        ({}, "(test command exit 5: collected none)"),
        (
            {
                "tests/test_gpu.py": "import pytest\n\n\n@pytest.mark.skip(reason='needs a GPU')\ndef test_gpu():\n"
                "    pass\n"
            },
            "(1 skipped, test command exit 0)",
        ),
    ],
)
def test_a_tree_with_no_test_that_passed_or_failed_is_unverified(
    tmp_path: Path, tests: dict[str, str], expected: str
) -> None:
    """No test ran, so nothing was replayed or cross-compiled: an empty run is no evidence for the tree."""
    root = write_files(
        tmp_path / "untested", {"calc/__init__.py": "", "calc/arith.py": FILES["calc/arith.py"], **tests}
    )
    verdict = verify_tree(root, TARGET, OPTIONS)
    assert (verdict.accepted, verdict.status) == (False, "unverified")
    assert verdict.reasons == [
        f"no evidence: no test passed or failed {expected}, so no kernel was launched or cross-compiled either: "
        "set [tool.porter.verify] test_cmd (or --test-cmd) to tests that exercise the code"
    ]
    assert not any("no test ran" in warning for warning in verdict.warnings)  # said once, as the reason


def test_git_repository_is_verified_in_a_worktree_and_left_clean(repo: Path) -> None:
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout

    git("init", "-q")
    git("add", "-A")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "base")
    verdict = verify_tree(repo, TARGET, OPTIONS)
    assert not verdict.accepted  # test_whisper fails in the tree as it is
    assert verdict.reasons[0].startswith("test fails: tests/test_text.py::test_whisper (")
    assert git("status", "--porcelain") == ""
    assert git("worktree", "list").count("\n") == 1  # the temporary worktree was removed


def test_cli_json_verdicts_for_a_patch_series(repo: Path, tmp_path: Path, capsys) -> None:
    import json

    from porter.cli import main

    add_whisper = tmp_path / "0001-whisper.patch"
    add_whisper.write_text(
        "--- a/calc/text.py\n+++ b/calc/text.py\n@@ -1,2 +1,5 @@\n def shout(s):\n"
        "     return s.upper()\n+\n+def whisper(s):\n+    return s.lower()\n",
        encoding="utf-8",
    )
    break_mul = tmp_path / "0002-break-mul.patch"
    break_mul.write_text(
        "--- a/calc/arith.py\n+++ b/calc/arith.py\n@@ -4,3 +4,3 @@\n \n def mul(a, b):\n"
        "-    return a * b\n+    return a * b + 1\n",
        encoding="utf-8",
    )
    report = tmp_path / "verdicts.json"
    code = main(
        [
            "verify",
            str(repo),
            "--jobs",
            "0",
            "--format",
            "json",
            "--patch",
            str(add_whisper),
            "--patch",
            str(break_mul),
            "--output",
            str(report),
        ]
    )
    payload = json.loads(capsys.readouterr().out)
    assert code == 1
    assert json.loads(report.read_text()) == payload
    first, second = payload["verdicts"]
    assert (first["patch_id"], first["accepted"], first["newly_passing"]) == (
        "0001-whisper",
        True,
        ["tests/test_text.py::test_whisper"],
    )
    assert (second["patch_id"], second["accepted"]) == ("0002-break-mul", False)
    assert second["tests"]["failed"] == ["tests/test_arith.py::test_mul"]


def test_only_tests_that_passed_before_are_newly_failing(repo: Path) -> None:
    """At baseline tests/test_loud.py does not import (a name that does not exist yet) and pytest stops at the
    collection error, so no test runs. The patch adds the name: test_loud passes, test_louder fails, and so does
    test_text.py's test_whisper, which fails whatever the patch. Nothing says the patch broke either: warnings,
    not 'newly failing' (the bundled example's matmul tests after its PT201 fix read as broken by every patch)."""
    (repo / "tests/test_loud.py").write_text(
        "from calc.text import loud\n\n\ndef test_loud():\n    assert loud('a') == 'A!'\n\n\n"
        "def test_louder():\n    assert loud('a') == 'A!!'\n",
        encoding="utf-8",
    )
    loud = edit(
        repo,
        "calc/text.py",
        "    return s.upper()\n",
        "    return s.upper()\n\n\ndef loud(s):\n    return s.upper() + '!'\n",
        "0001-loud",
    )
    [verdict] = verify_patches(repo, [loud], TARGET, OPTIONS)
    assert verdict.accepted, verdict.reasons
    assert "tests/test_loud.py::test_loud" in verdict.newly_passing
    assert verdict.newly_failing == []
    [unknown] = [w for w in verdict.warnings if "did not run before" in w]
    assert unknown.startswith("1 test(s) fail that did not run before these patches") and "test_whisper" in unknown
    [broken] = [w for w in verdict.warnings if "before and after" in w]  # its file errored before
    assert broken.startswith("1 test(s) fail before and after") and "test_louder" in broken


def test_a_passing_opaque_test_command_leaves_the_tree_unverified(repo: Path) -> None:
    """A command that is not pytest runs without the replay: no emulation, no launch, no compile. Its exit
    status 0 says the tests pass here, nothing about the target, so the tree is not accepted on it."""
    passing = verify_tree(repo, TARGET, VerifyOptions(jobs=0, test_cmd=("true",)))
    assert (passing.accepted, passing.status) == (False, "unverified")
    assert passing.reasons[0].startswith("no evidence for the target: the test command is not pytest")
    failing = verify_tree(repo, TARGET, VerifyOptions(jobs=0, test_cmd=("false",)))
    assert (failing.accepted, failing.status) == (False, "rejected")  # a failure seen is still a verdict
