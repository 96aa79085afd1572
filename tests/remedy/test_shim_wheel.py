"""The shim ships with the ported project: a wheel of the ported src-layout fixture carries it inside the
package, and the installed package imports it (no network: pip builds with the setuptools installed here)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from porter.analyze import load_rules
from porter.analyze.scan import scan_tree
from porter.remedy.patches import compose, write_files_atomically
from porter.remedy.planner import plan_patches
from porter.targets import get_target

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "nvfirst"

PROBE = """
import json, sys
import nvfirst, nvfirst.matmul, nvfirst._porter_shim as shim
print(json.dumps({"package": nvfirst.__file__, "shim": shim.__file__, "bound": nvfirst.matmul.porter_shim is shim,
                  "target": shim.TARGET, "max_num_warps": shim.MAX_NUM_WARPS}))
"""


def ported_fixture(root: Path) -> Path:
    tree = root / "nvfirst"
    shutil.copytree(FIXTURE, tree, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache", "*.egg-info"))
    target = get_target("mi350x")
    result = scan_tree(tree, target, load_rules())
    plan = plan_patches(tree, result.findings, target)
    texts, skipped = compose(plan.patches, plan.originals, {p.id for p in plan.patches})
    assert not skipped, skipped
    write_files_atomically(tree, texts)
    return tree


def run(command: list[str], cwd: Path, **env: str) -> str:
    environment = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TRITON_INTERPRET")} | env
    done = subprocess.run(command, cwd=cwd, env=environment, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return done.stdout


@pytest.mark.slow
def test_a_wheel_of_the_ported_src_layout_ships_and_imports_the_shim(tmp_path):
    tree = ported_fixture(tmp_path)
    assert (tree / "src" / "nvfirst" / "_porter_shim.py").is_file()
    assert not (tree / "porter_shim.py").exists() and not (tree / "src" / "porter_shim.py").exists()
    assert "from nvfirst import _porter_shim as porter_shim" in (tree / "src" / "nvfirst" / "matmul.py").read_text()

    dist = tmp_path / "dist"
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-build-isolation",
            "--no-deps",
            "--no-index",
            "-q",
            "-w",
            str(dist),
            str(tree),
        ],
        cwd=tmp_path,
    )
    [wheel] = dist.glob("nvfirst-*.whl")
    assert "nvfirst/_porter_shim.py" in zipfile.ZipFile(wheel).namelist()

    site = tmp_path / "site"
    run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q", "--target", str(site), str(wheel)],
        cwd=tmp_path,
    )
    shutil.rmtree(tree)  # nothing may come from the source tree
    seen = json.loads(
        run([sys.executable, "-c", PROBE], cwd=tmp_path, PYTHONPATH=str(site), PORTER_EMULATE_TARGET="mi350x")
        .strip()
        .splitlines()[-1]
    )
    assert Path(seen["shim"]).parent == Path(seen["package"]).parent == site / "nvfirst"
    assert seen["bound"] and seen["target"] == "mi350x" and seen["max_num_warps"] == 16
