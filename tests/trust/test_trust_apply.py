"""`--apply` as one transaction: bytes, endings, BOM and modes kept; changed files refused; a kill -9
at any moment leaves every file old or new, and the next start makes the tree consistent."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from porter.records import FileEdit, Patch
from porter.remedy import apply as transaction
from porter.remedy.apply import WORK_DIR, ApplyError, apply_transaction, recover
from porter.remedy.patches import tree_patch_text, unified_diff
from porter.remedy.textform import normalize

ROOT = Path(__file__).resolve().parents[2]


def _write(path: Path, data: bytes, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    os.chmod(path, mode)


def _edit(raw: bytes) -> tuple[str, str]:
    """(what porter read, the edited text): the second line replaced, a line added at the end."""
    text = normalize(raw.decode("utf-8"))
    lines = text.split("\n")
    lines[1] = "num_warps = 8  # porter"
    return text, "\n".join(lines[:-1] + ["added = True", lines[-1]])


CASES = {
    "crlf.py": (
        b"import triton\r\nnum_warps = 32\r\nx = 1\r\n",
        b"import triton\r\nnum_warps = 8  # porter\r\nx = 1\r\nadded = True\r\n",
    ),
    "cr.py": (
        b"import triton\rnum_warps = 32\rx = 1\r",
        b"import triton\rnum_warps = 8  # porter\rx = 1\radded = True\r",
    ),
    "mixed.py": (
        b"import triton\r\nnum_warps = 32\nx = 1\r\ny = 2\r\n",
        b"import triton\r\nnum_warps = 8  # porter\r\nx = 1\r\ny = 2\r\nadded = True\r\n",
    ),
    "bom.py": (
        "\ufeffimport triton\nnum_warps = 32\n".encode(),
        "\ufeffimport triton\nnum_warps = 8  # porter\nadded = True\n".encode(),
    ),
    "run.sh": (b"#!/bin/sh\nnum_warps=32\n", b"#!/bin/sh\nnum_warps = 8  # porter\nadded = True\n"),
}


def test_endings_bom_and_mode_round_trip_byte_for_byte(tmp_path):
    originals, texts = {}, {}
    for name, (raw, _) in CASES.items():
        _write(tmp_path / name, raw, 0o755 if name == "run.sh" else 0o640)
        originals[name], texts[name] = _edit(raw)
    written = apply_transaction(tmp_path, texts, originals)
    assert sorted(written) == sorted(CASES)
    for name, (_, expected) in CASES.items():
        assert (tmp_path / name).read_bytes() == expected, name
    assert os.stat(tmp_path / "run.sh").st_mode & 0o777 == 0o755
    assert os.stat(tmp_path / "crlf.py").st_mode & 0o777 == 0o640
    assert not (tmp_path / WORK_DIR).exists()
    assert (
        apply_transaction(
            tmp_path,
            {n: normalize(e.decode()) for n, (_, e) in CASES.items()},
            {n: normalize(e.decode()) for n, (_, e) in CASES.items()},
        )
        == []
    )  # idempotent


@pytest.mark.skipif(shutil.which("git") is None, reason="git apply checks the patch file")
def test_patch_files_git_apply_on_crlf_and_mixed_trees(tmp_path):
    tree, check = tmp_path / "tree", tmp_path / "check"
    edits = []
    for name in ("crlf.py", "mixed.py", "bom.py"):
        raw, expected = CASES[name]
        _write(tree / name, raw)
        before, after = _edit(raw)
        edits.append(FileEdit(path=name, before=before, after=after))
    patch = Patch(
        id="0001-PT1",
        kind="codemod",
        rules=["PT1"],
        title="t",
        rationale="r",
        edits=edits,
        diff="".join(unified_diff(e) for e in edits),
    )
    shutil.copytree(tree, check)
    (tmp_path / "p.patch").write_text(tree_patch_text(tree, patch), encoding="utf-8", newline="")
    done = subprocess.run(["git", "apply", str(tmp_path / "p.patch")], cwd=check, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    for name in ("crlf.py", "mixed.py", "bom.py"):
        assert (check / name).read_bytes() == CASES[name][1], name


def test_a_file_changed_since_it_was_read_is_refused_and_nothing_is_written(tmp_path):
    _write(tmp_path / "a.py", b"a = 1\n")
    _write(tmp_path / "b.py", b"b = 1\n")
    (tmp_path / "b.py").write_bytes(b"b = 1  # the user saved this meanwhile\n")
    with pytest.raises(ApplyError, match=r"changed since porter read them: b\.py; nothing was written"):
        apply_transaction(tmp_path, {"a.py": "a = 2\n", "b.py": "b = 2\n"}, {"a.py": "a = 1\n", "b.py": "b = 1\n"})
    assert (tmp_path / "a.py").read_bytes() == b"a = 1\n"
    assert not (tmp_path / WORK_DIR).exists()


def test_a_save_between_staging_and_rename_is_caught_by_the_last_hash_check(tmp_path, monkeypatch):
    _write(tmp_path / "a.py", b"a = 1\n")
    _write(tmp_path / "b.py", b"b = 1\n")
    real_stage = transaction._stage

    def stage_then_user_saves(*args):
        entries = real_stage(*args)
        (tmp_path / "b.py").write_bytes(b"b = 'saved by the user'\n")
        return entries

    monkeypatch.setattr(transaction, "_stage", stage_then_user_saves)
    with pytest.raises(ApplyError, match=r"changed while porter ran: b\.py"):
        apply_transaction(tmp_path, {"a.py": "a = 2\n", "b.py": "b = 2\n"}, {"a.py": "a = 1\n", "b.py": "b = 1\n"})
    assert (tmp_path / "a.py").read_bytes() == b"a = 1\n"
    assert (tmp_path / "b.py").read_bytes() == b"b = 'saved by the user'\n"


def test_a_failing_rename_rolls_every_file_back_with_its_mode(tmp_path, monkeypatch):
    _write(tmp_path / "a.py", b"a = 1\r\n", 0o755)
    _write(tmp_path / "c.py", b"c = 1\n")
    real_replace, calls = os.replace, []

    def failing_replace(source, destination):
        calls.append(destination)
        if len(calls) == 3:  # a.py and new/b.py are in place when c.py fails
            raise OSError(28, "No space left on device", str(destination))
        return real_replace(source, destination)

    monkeypatch.setattr(transaction.os, "replace", failing_replace)
    with pytest.raises(ApplyError, match="rolled back, nothing changed.*No space left on device"):
        apply_transaction(
            tmp_path, {"a.py": "a = 2\n", "new/b.py": "b\n", "c.py": "c = 2\n"}, {"a.py": "a = 1\n", "c.py": "c = 1\n"}
        )
    assert (tmp_path / "a.py").read_bytes() == b"a = 1\r\n" and os.stat(tmp_path / "a.py").st_mode & 0o777 == 0o755
    assert not (tmp_path / "new").exists() and (tmp_path / "c.py").read_bytes() == b"c = 1\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py", "c.py"]


def test_a_new_file_never_replaces_a_link_or_special_file(tmp_path):
    outside = tmp_path / "outside.py"
    outside.write_text("keep\n")
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "link.py").symlink_to(outside)
    with pytest.raises(ApplyError):
        apply_transaction(tmp_path / "tree", {"link.py": "new\n"}, {"link.py": "keep\n"})
    assert outside.read_text() == "keep\n" and (tmp_path / "tree" / "link.py").is_symlink()


DRIVER = textwrap.dedent(
    """\
    import os, sys, time, types
    from pathlib import Path
    from porter.remedy import apply
    def slow_replace(source, destination):  # widen the rename phase so that kills land in it too
        time.sleep(0.008)
        os.replace(source, destination)
    apply.os = types.SimpleNamespace(**{**vars(os), "replace": slow_replace})
    apply_transaction = apply.apply_transaction
    root = Path(sys.argv[1])
    names = sorted(p.name for p in root.glob("f*.py"))
    old = {n: (root / n).read_text() for n in names}
    print("ready", flush=True)
    apply_transaction(root, {n: old[n].replace("old", "new") for n in names}, old)
    """
)


def test_kill_9_at_random_moments_leaves_every_file_old_or_new_and_the_next_start_consistent(tmp_path):
    rng = random.Random(16)
    tree = tmp_path / "tree"
    names = [f"f{index:03d}.py" for index in range(40)]
    olds = {n: f"# {n}\r\n" + "value = 'old'\r\n" * 200 for n in names}
    new_bytes = {n: olds[n].replace("old", "new").encode() for n in names}
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    outcomes = {"old": 0, "new": 0}
    deadline = time.monotonic() + 30
    for attempt in range(16):
        if time.monotonic() > deadline:
            break
        shutil.rmtree(tree, ignore_errors=True)
        for n in names:
            _write(tree / n, olds[n].encode(), 0o750)
        process = subprocess.Popen([sys.executable, str(driver), str(tree)], env=env, stdout=subprocess.PIPE)
        assert process.stdout.readline() == b"ready\n"
        time.sleep(rng.uniform(0.0, 1.2))
        process.send_signal(signal.SIGKILL)
        process.wait()
        for n in names:  # before the next start: each file whole, old or new
            assert (tree / n).read_bytes() in (olds[n].encode(), new_bytes[n]), (attempt, n)
        recovered = recover(tree)  # the next start
        outcomes["recovered"] = outcomes.get("recovered", 0) + bool(recovered)
        states = {"new" if (tree / n).read_bytes() == new_bytes[n] else "old" for n in names}
        assert len(states) == 1, f"attempt {attempt}: a mix of old and new files after recovery"
        outcomes[states.pop()] += 1
        assert sorted(p.name for p in tree.iterdir()) == names  # no temp files, no work directory
        assert all(os.stat(tree / n).st_mode & 0o777 == 0o750 for n in names)
    assert outcomes["old"] + outcomes["new"] >= 8 and outcomes["recovered"] >= 4, outcomes
