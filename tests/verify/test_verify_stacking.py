"""Patches judged on top of the fix that lets the tests import at all.

A small pure-Python package whose `__init__` refuses to import (as nvkernels refuses a ROCm build of
PyTorch): its tests error until one patch removes the check. The other patches of the plan are judged
with that patch applied, so a good patch gets evidence from tests that ran with it and a broken one is
rejected for what it breaks, whichever order the plan lists them in.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from porter.records import FileEdit, Patch, Verdict
from porter.targets import get_target
from porter.verify import VerifyOptions, verify_patches

TARGET = get_target("mi350x")
OPTIONS = VerifyOptions(jobs=0, timeout_s=120)

FILES = {
    "gate/__init__.py": "from gate.hw import check\n\ncheck()\n",
    "gate/hw.py": "def check():\n    raise RuntimeError('gate needs a CUDA build of PyTorch')\n",
    "gate/arith.py": "def add(a, b):\n    return a + b\n",
    "gate/text.py": "def shout(s):\n    return s.upper()\n\n\ndef size(s):\n    return len(s)\n",
    "util.py": "def double(x):\n    return 2 * x\n",
    "tests/test_arith.py": "from gate.arith import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    "tests/test_text.py": (
        "from gate.text import shout, size\n\n\ndef test_shout():\n    assert shout('a') == 'A'\n\n\n"
        "def test_size():\n    assert size('ab') == 2\n"
    ),
    "tests/test_util.py": "from util import double\n\n\ndef test_double():\n    assert double(2) == 4\n",
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "gate-repo"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def edit(repo: Path, rel: str, old: str, new: str, patch_id: str) -> Patch:
    before = (repo / rel).read_text(encoding="utf-8")
    assert old in before
    return Patch(patch_id, "codemod", [], patch_id, "test", [FileEdit(rel, before, before.replace(old, new))])


def unblock(repo: Path, patch_id: str) -> Patch:
    return edit(
        repo, "gate/hw.py", "    raise RuntimeError('gate needs a CUDA build of PyTorch')\n", "    pass\n", patch_id
    )


def by_id(verdicts: list[Verdict]) -> dict[str, Verdict]:
    return {verdict.patch_id: verdict for verdict in verdicts}


def test_patches_are_judged_on_top_of_the_fix_their_tests_need_to_import(repo: Path) -> None:
    good = edit(repo, "gate/arith.py", "return a + b", "return b + a", "0001-good")
    # breaks a test that passes before any patch: the plan's batch fails and is bisected
    bad_util = edit(repo, "util.py", "return 2 * x", "return 2 * x + 1", "0002-bad-util")
    # breaks a test that can only run once the package imports
    bad_text = edit(repo, "gate/text.py", "return s.upper()", "return s.lower()", "0003-bad-text")
    verdicts = by_id(verify_patches(repo, [good, bad_util, bad_text, unblock(repo, "0004-unblock")], TARGET, OPTIONS))

    assert verdicts["0004-unblock"].accepted, verdicts["0004-unblock"].reasons
    # judged with the unblocking patch applied: its test ran, so it has evidence
    assert verdicts["0001-good"].accepted, verdicts["0001-good"].reasons
    assert "tests/test_arith.py::test_add" in verdicts["0001-good"].tests.passed
    # its failure shows only once the package imports: it is still its own, not hidden by the good patch
    assert verdicts["0003-bad-text"].status == "rejected"
    assert verdicts["0003-bad-text"].reasons == [
        "test passed without these patches and fails with them: tests/test_text.py::test_shout "
        "(AssertionError: assert 'a' == 'A')"
    ]
    # the test it breaks errored before any patch (pytest stops at the collection errors): judged with the
    # unblocking patch applied, the test passes without it and fails with it
    assert verdicts["0002-bad-util"].status == "rejected"
    assert verdicts["0004-unblock"].stacked_on == []
    assert verdicts["0001-good"].stacked_on == ["0004-unblock"]
    assert (repo / "gate/hw.py").read_text() == FILES["gate/hw.py"]  # the user's tree is untouched


def switched_off(repo: Path) -> Patch:
    """The package's tests switched off by a setting no traceback names (a conftest skips them),
    and the patch that switches them on."""
    (repo / "gate/hw.py").write_text("def check():\n    pass\n", encoding="utf-8")
    (repo / "settings.py").write_text("ENABLED = False\n", encoding="utf-8")
    (repo / "tests/conftest.py").write_text(
        "import pytest\n\nfrom settings import ENABLED\n\n\n@pytest.fixture(autouse=True)\n"
        "def gate_switch(request):\n    if not ENABLED and 'test_util' not in request.node.nodeid:\n"
        "        pytest.skip('the gate package is switched off')\n",
        encoding="utf-8",
    )
    return edit(repo, "settings.py", "ENABLED = False", "ENABLED = True", "0003-enable")


def test_a_patch_left_without_evidence_is_judged_again_once_the_stack_grows(repo: Path) -> None:
    """The fix is found only by its verdict: the patch that had no test run is judged again on top of it."""
    enable = switched_off(repo)
    good = edit(repo, "gate/arith.py", "return a + b", "return b + a", "0001-good")
    bad_util = edit(repo, "util.py", "return 2 * x", "return 2 * x + 1", "0002-bad-util")
    verdicts = by_id(verify_patches(repo, [good, bad_util, enable], TARGET, OPTIONS))

    assert verdicts["0003-enable"].accepted, verdicts["0003-enable"].reasons
    assert verdicts["0002-bad-util"].status == "rejected"
    assert verdicts["0001-good"].accepted, verdicts["0001-good"].reasons
    assert verdicts["0001-good"].stacked_on == ["0003-enable"]


def test_the_callers_first_patches_are_judged_before_the_rest(repo: Path) -> None:
    """What an earlier round accepted is judged first; the round's other patches run on top of it."""
    enable = switched_off(repo)
    good = edit(repo, "gate/arith.py", "return a + b", "return b + a", "0001-good")
    bad_util = edit(repo, "util.py", "return 2 * x", "return 2 * x + 1", "0002-bad-util")
    runs: list[str] = []

    def progress(phase: str, done: int, total: int, item: str) -> None:
        if phase == "testing":
            runs.append(item)

    patches = [good, bad_util, enable]
    verdicts = by_id(verify_patches(repo, patches, TARGET, OPTIONS, progress=progress, judge_first=["0003-enable"]))

    assert runs[:3] == [
        "the unpatched tree",
        "1 patch(es) 0003-enable",
        "3 patch(es) 0001-good, 0002-bad-util, 0003-enable",
    ]
    assert verdicts["0003-enable"].accepted, verdicts["0003-enable"].reasons
    assert verdicts["0002-bad-util"].status == "rejected"
    assert verdicts["0001-good"].accepted, verdicts["0001-good"].reasons
    assert verdicts["0001-good"].stacked_on == ["0003-enable"]
