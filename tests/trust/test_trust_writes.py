"""What porter writes: only regular files or new paths, modes kept, secrets and terminal codes out,
--out checked against the tree, the report before the tree, and one line for the machine's errors."""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path

import pytest
import typer

from porter.cli import main
from porter.cli.errors import report_internal_error
from porter.report.output import OutputError, atomic_write_text
from porter.report.report_dir import MANIFEST, check_out_dir, publish, strip_terminal_codes

KEY = "sk-live-abcdefghijklmnop"


def _scan_to(tmp_path: Path, output: Path) -> int:
    (tmp_path / "src").mkdir(exist_ok=True)
    (tmp_path / "src" / "k.py").write_text("import torch\nx = torch.cuda.get_device_properties(0).L2_cache_size\n")
    return main(["scan", str(tmp_path / "src"), "--format", "json", "--output", str(output)])


def test_scan_output_onto_a_fifo_or_device_is_refused_with_exit_2(tmp_path, capsys):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert _scan_to(tmp_path, fifo) == 2
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert "not a regular file (a FIFO)" in capsys.readouterr().err
    if os.geteuid() == 0:  # a character device like /dev/null, made here rather than risking the real one
        device = tmp_path / "null"
        os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        assert _scan_to(tmp_path, device) == 2
        assert stat.S_ISCHR(os.lstat(device).st_mode)


def test_a_symlink_out_of_the_directory_is_refused_one_inside_is_written_through(tmp_path, capsys):
    outside = tmp_path / "outside.txt"
    outside.write_text("keep\n")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "escape.json").symlink_to(outside)
    assert _scan_to(tmp_path, tmp_path / "out" / "escape.json") == 2
    assert outside.read_text() == "keep\n" and "outside" in capsys.readouterr().err
    (tmp_path / "out" / "real.json").write_text("{}")
    (tmp_path / "out" / "alias.json").symlink_to("real.json")
    assert _scan_to(tmp_path, tmp_path / "out" / "alias.json") in (0, 1)
    assert (tmp_path / "out" / "alias.json").is_symlink() and json.loads((tmp_path / "out" / "real.json").read_text())


def test_a_replaced_file_keeps_its_mode_and_a_new_one_gets_the_umask(tmp_path):
    script = tmp_path / "run.sh"
    script.write_text("old\n")
    os.chmod(script, 0o755)
    atomic_write_text(script, "new\n")
    assert script.read_text() == "new\n" and stat.S_IMODE(os.stat(script).st_mode) == 0o755
    previous = os.umask(0o027)
    try:
        atomic_write_text(tmp_path / "fresh.txt", "x")
    finally:
        os.umask(previous)
    assert stat.S_IMODE(os.stat(tmp_path / "fresh.txt").st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fresh.txt", "run.sh"]  # no temp file left


def test_secrets_and_terminal_codes_never_reach_a_report(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("CI_DEPLOY_TOKEN", "tok-9876543210")
    out = publish(
        tmp_path / "r",
        {
            "report.md": strip_terminal_codes(f"key {KEY} \x1b[31mred\x1b[0m \x1b]0;title\x07 ok"),
            "report.json": json.dumps({"token": "tok-9876543210"}),
        },
    )
    text = (out / "report.md").read_text()
    assert text == "key [redacted] red  ok"
    assert "tok-9876543210" not in (out / "report.json").read_text()


def test_out_is_refused_on_the_tree_a_file_or_a_foreign_directory(tmp_path):
    tree = tmp_path / "repo"
    (tree / "src").mkdir(parents=True)
    (tree / "src" / "a.py").write_text("x = 1\n")
    for bad, reason in (
        (tree, "the scanned tree"),
        (tmp_path, "the scanned tree or holds it"),
        (tree / "src" / "a.py", "not a directory"),
        (tree / "src", "not a porter report"),
    ):
        with pytest.raises(OutputError, match=reason):
            check_out_dir(bad, tree)
    assert check_out_dir(tree / "porter-report", tree) == tree / "porter-report"  # a new path is fine


def test_a_previous_report_is_replaced_and_only_its_own_files_are_removed(tmp_path):
    out = tmp_path / "r"
    publish(out, {"report.md": "one\n", "patches/0001-a.patch": "a\n", "patches/0002-b.patch": "b\n"})
    (out / "patches" / "mine.patch").write_text("the user's own patch\n")
    check_out_dir(out)
    publish(out, {"report.md": "two\n", "patches/0001-a.patch": "a2\n"})
    assert (out / "report.md").read_text() == "two\n" and not (out / "patches" / "0002-b.patch").exists()
    assert (out / "patches" / "mine.patch").read_text() == "the user's own patch\n"
    assert json.loads((out / MANIFEST).read_text())["files"] == ["patches/0001-a.patch", "report.md"]
    assert not [p for p in tmp_path.iterdir() if p.name != "r"]  # the staging directory is gone


def test_rewrite_refuses_a_bad_out_before_touching_anything(example_repo, tmp_path):
    from porter.cli.rewrite import run_rewrite

    repo = example_repo
    before = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts}
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "patches").mkdir()
    (foreign / "patches" / "keep.patch").write_text("mine\n")
    with pytest.raises(OutputError, match="not a porter report"):
        run_rewrite(repo, target="mi300x", out=foreign, verify=False, apply=True, echo=lambda *a, **k: None)
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the report should go\n")
    with pytest.raises(OutputError):
        run_rewrite(repo, target="mi300x", out=blocked, verify=False, apply=True, echo=lambda *a, **k: None)
    after = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts}
    assert after == before and (foreign / "patches" / "keep.patch").read_text() == "mine\n"


def test_environment_errors_are_one_line_naming_the_path(capsys):
    with pytest.raises(typer.Exit) as exit_info:
        try:
            raise OSError(errno.ENOSPC, "No space left on device", "/srv/out/report.md")
        except OSError as error:
            report_internal_error(error)
    assert exit_info.value.exit_code == 2
    err = capsys.readouterr().err
    assert err.strip() == "porter: /srv/out/report.md: No space left on device" and "bug" not in err


def test_scan_output_into_an_unwritable_place_is_one_line(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert _scan_to(tmp_path, blocker / "report.json") == 2
    err = capsys.readouterr().err
    assert f"{blocker}: not a directory" in err and "bug in porter" not in err and len(err.strip().splitlines()) == 1


def test_a_refused_apply_leaves_the_tree_and_a_report_that_says_so(example_repo, tmp_path, monkeypatch):
    from porter.cli.rewrite import run_rewrite
    from porter.remedy import patches
    from porter.remedy.apply import ApplyError

    order = []

    def refuse(root, texts, originals=None):
        order.append(("apply", (tmp_path / "r" / "report.json").is_file()))
        raise ApplyError("--apply refused: changed since porter read them: x.py; nothing was written")

    monkeypatch.setattr(patches, "write_files_atomically", refuse)
    with pytest.raises(ApplyError):
        run_rewrite(
            example_repo, target="mi300x", out=tmp_path / "r", verify=False, apply=True, echo=lambda *a, **k: None
        )
    assert order == [("apply", True)]  # the report existed before the tree was touched
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    assert report["patches"] and all(p["status"] != "applied" for p in report["patches"])
    assert all("changed since porter read them" in p["not_applied_reason"] for p in report["patches"])
