"""The replay records, per test, the repository files it imported (collection and conftests
included), and a verdict whose passing tests import none of the patched code says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from porter.records import FileEdit, Patch
from porter.targets import get_target
from porter.verify import VerifyOptions, verify_patches
from porter.verify.runner import run_tests

FILES = {
    "pkg/__init__.py": "from .kernels import double\n",
    "pkg/kernels.py": "def double(x):\n    return 2 * x\n",
    "other.py": "def triple(x):\n    return 3 * x\n",
    "lazy.py": "VALUE = 7\n",
    "unused.py": "def nothing():\n    return None\n",
    "conf_helper.py": "MARK = 1\n",
    "tests/conftest.py": "import conf_helper  # noqa: F401\n",
    "tests/test_a.py": "from pkg import double\n\n\ndef test_double():\n    assert double(2) == 4\n",
    "tests/test_b.py": "import other\n\n\ndef test_triple():\n    assert other.triple(2) == 6\n",
    "tests/test_c.py": "def test_lazy():\n    import lazy\n    assert lazy.VALUE == 7\n",
}
CONFTEST = ["conf_helper.py", "tests/conftest.py"]
OPTIONS = VerifyOptions(jobs=0, timeout_s=120)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "imports-repo"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def test_each_test_lists_the_files_it_imported(repo: Path) -> None:
    result = run_tests(repo, OPTIONS, "mi350x", None)
    assert result.problem == ""
    imports = result.run.imports
    assert imports["tests/test_a.py::test_double"] == sorted(
        CONFTEST + ["pkg/__init__.py", "pkg/kernels.py", "tests/test_a.py"]
    )
    assert imports["tests/test_b.py::test_triple"] == sorted(CONFTEST + ["other.py", "tests/test_b.py"])
    # imported inside the test function, after collection
    assert imports["tests/test_c.py::test_lazy"] == sorted(CONFTEST + ["lazy.py", "tests/test_c.py"])


def _edit(repo: Path, rel: str, old: str, new: str, patch_id: str) -> Patch:
    before = (repo / rel).read_text(encoding="utf-8")
    return Patch(patch_id, "codemod", [], patch_id, "test", [FileEdit(rel, before, before.replace(old, new))])


def test_a_patch_no_passing_test_imports_is_flagged(repo: Path) -> None:
    exercised = _edit(repo, "pkg/kernels.py", "2 * x", "x + x", "0001-kernels")
    unexercised = _edit(repo, "unused.py", "return None", "return 0", "0002-unused")
    options = VerifyOptions(jobs=0, timeout_s=120, select_tests=False)
    verdicts = verify_patches(repo, [exercised, unexercised], get_target("mi350x"), options)
    by_id = {verdict.patch_id: verdict for verdict in verdicts}
    assert by_id["0001-kernels"].accepted
    assert not any("imports the patched code" in w for w in by_id["0001-kernels"].warnings)
    [warning] = [w for w in by_id["0002-unused"].warnings if "imports the patched code" in w]
    assert "unused.py" in warning
