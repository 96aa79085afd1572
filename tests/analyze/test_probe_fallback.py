"""PT402 and other `fallback_ok` string matches: a probe that copes with the tool being absent is no finding."""

from __future__ import annotations

import pytest

from porter.analyze import analyze_source, load_rules
from porter.targets import get_target

RULES = load_rules(select=["PT402"])
MI300X = get_target("mi300x")


def lines_of(text: str) -> list[int]:
    return [f.line for f in analyze_source(text, "m.py", MI300X, RULES) if f.rule == "PT402"]


@pytest.mark.parametrize(
    "handler",
    [
        "FileNotFoundError",
        "OSError",
        "subprocess.CalledProcessError",
        "(FileNotFoundError, subprocess.CalledProcessError)",
        "Exception",
        "",
    ],
)
def test_probe_in_try_whose_handler_catches_the_missing_tool_is_not_reported(handler):
    code = (
        "import subprocess\n"
        "def driver_version():\n"
        "    try:\n"
        "        out = subprocess.check_output(['nvidia-smi', '--query-gpu=driver_version', '--format=csv'])\n"
        f"    except {handler}:\n".replace("except :", "except:")
        + "        return None\n"
        "    return out.decode().strip()\n"
    )
    assert lines_of(code) == []


def test_probe_whose_handler_catches_something_else_is_reported():
    code = (
        "import subprocess\n"
        "try:\n"
        "    out = subprocess.check_output(['nvidia-smi', '-L'])\n"
        "except (ValueError, KeyError):\n"
        "    out = b''\n"
    )
    assert lines_of(code) == [3]


def test_probe_in_a_handler_or_else_block_has_no_fallback():
    code = (
        "import subprocess\n"
        "try:\n"
        "    import pynvml\n"
        "except ImportError:\n"
        "    pynvml = None\n"
        "else:\n"
        "    subprocess.run(['nvidia-smi', '-pm', '1'])\n"
        "try:\n"
        "    x = 1\n"
        "except OSError:\n"
        "    subprocess.run(['nvidia-smi', '-r'])\n"
    )
    assert lines_of(code) == [7, 11]


def test_a_try_outside_the_function_does_not_cover_its_body():
    code = (
        "import subprocess\n"
        "try:\n"
        "    def probe():\n"
        "        return subprocess.check_output(['nvidia-smi', '-L'])\n"
        "except OSError:\n"
        "    probe = None\n"
    )
    assert lines_of(code) == [4]


@pytest.mark.parametrize(
    "test",
    [
        "shutil.which('nvidia-smi')",
        "shutil.which('nvidia-smi') is not None",
        "HAVE_GPU and shutil.which('nvidia-smi') is not None",
    ],
)
def test_probe_under_a_which_check_is_not_reported(test):
    code = f"import shutil, subprocess\nif {test}:\n    info = subprocess.run(['nvidia-smi', 'topo', '-m'], capture_output=True)\n"
    assert lines_of(code) == []


@pytest.mark.parametrize("test", ["shutil.which('nvidia-smi') is None", "not shutil.which('nvidia-smi')"])
def test_negative_which_check_does_not_guard_its_body(test):
    code = f"import shutil, subprocess\nif {test}:\n    subprocess.run(['nvidia-smi', '-L'])\n"
    assert lines_of(code) == [3]


def test_which_in_a_conditional_expression_guards_only_its_true_arm():
    code = (
        "import shutil, subprocess\n"
        "a = subprocess.getoutput('nvidia-smi -L') if shutil.which('nvidia-smi') else ''\n"
        "b = '' if shutil.which('nvidia-smi') else subprocess.getoutput('nvidia-smi -L')\n"
    )
    assert lines_of(code) == [3]


def test_unguarded_probe_is_reported():
    code = (
        "import subprocess\nmem = subprocess.check_output(['nvidia-smi', '--query-gpu=memory.used', '--format=csv'])\n"
    )
    assert lines_of(code) == [2]
