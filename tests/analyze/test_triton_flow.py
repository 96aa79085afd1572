"""Value flow of launch/config values: helpers (every return), branches, clamps, tuples, loops,
comprehensions, module constants, across modules of the scanned tree; findings at the origin."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from porter.analyze import analyze_source, load_rules
from porter.analyze.scan import scan_tree
from porter.analyze.triton import flow, inventory_for_source
from porter.analyze.triton.fold import Range

KERNEL = """
import triton
import triton.language as tl

@triton.jit
def k(x, BLOCK: tl.constexpr):
    pass
"""

SETTINGS = """
import triton

MAX_FUSED_SIZE = 65536

def calculate_settings(n):
    BLOCK_SIZE = triton.next_power_of_2(n)
    if BLOCK_SIZE > MAX_FUSED_SIZE:
        raise RuntimeError("n too large")
    num_warps = 4
    if BLOCK_SIZE >= 32768:
        num_warps = 32
    elif BLOCK_SIZE >= 8192:
        num_warps = 16
    elif BLOCK_SIZE >= 2048:
        num_warps = 8
    return BLOCK_SIZE, num_warps

def clamp_warps(block):
    return max(4, min(32, block // 512))
"""

CALLERS = (
    KERNEL
    + """
from .utils import calculate_settings, clamp_warps

def rms_norm(x, n_cols):
    BLOCK_SIZE, num_warps = calculate_settings(n_cols)
    k[(1,)](x, BLOCK=BLOCK_SIZE, num_warps=num_warps)

def layer_norm(x, block):
    k[(1,)](x, BLOCK=block, num_warps=clamp_warps(block))
"""
)


@pytest.fixture(autouse=True)
def no_project():
    flow.set_project(None)
    yield
    flow.set_project(None)


@pytest.fixture(scope="module")
def rules():
    return load_rules(select=["PT101", "PT103"])


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    return root


def line_of(text: str, snippet: str, nth: int = 1) -> int:
    """1-based line of the nth line containing snippet, in the text as write_tree/analyze_source see it."""
    lines = [i for i, line in enumerate(textwrap.dedent(text).lstrip("\n").splitlines(), 1) if snippet in line]
    return lines[nth - 1]


U32 = line_of(SETTINGS, "num_warps = 32")
UCLAMP = line_of(SETTINGS, "min(32")
L1 = line_of(CALLERS, "num_warps=num_warps")
L2 = line_of(CALLERS, "clamp_warps(block)")


def last_launch_val(source: str, key: str = "num_warps"):
    inv = inventory_for_source(textwrap.dedent(source))
    return inv, inv.launches[-1].options[key]


def test_helper_branches_every_return_with_conditions():
    source = (
        SETTINGS
        + KERNEL
        + """
def f(x, n):
    BLOCK_SIZE, num_warps = calculate_settings(n)
    k[(1,)](x, BLOCK=BLOCK_SIZE, num_warps=num_warps)
"""
    )
    inv, val = last_launch_val(source)
    assert sorted(val.values) == [4, 8, 16, 32]
    thirty_two = next(p for p in val.possibles if p.value == 32)
    assert thirty_two.when == "BLOCK_SIZE >= 32768" and thirty_two.via == "calculate_settings(n)"
    assert (
        inv.span(thirty_two.node).line == line_of(source, "num_warps = 32") + 1
    )  # the helper's line: what a port changes


def test_clamp_of_an_unknown_is_an_interval_at_its_cap():
    inv, val = last_launch_val(SETTINGS + KERNEL + "def f(x, b):\n    k[(1,)](x, BLOCK=b, num_warps=clamp_warps(b))\n")
    (possible,) = val.possibles
    assert possible.value == Range(4, 32) and possible.when == "block >= 16384"
    assert inv.code(possible.node) == "32"
    assert flow.describe(possible, val) == "4..32 from `clamp_warps(b)`; 32 for block >= 16384"


@pytest.mark.parametrize(
    "expr, expected",
    [
        ("min(16, n // 64)", Range(None, 16)),
        ("max(2, n)", None),  # bounded below only: no upper end to check
        ("min(8, max(1, n // 256)) * 2", Range(2, 16)),
        ("triton.next_power_of_2(min(n, 4096))", Range(None, 4096)),
    ],
)
def test_interval_arithmetic(expr, expected):
    inv, val = last_launch_val(KERNEL + f"def f(x, n):\n    k[(1,)](x, BLOCK=64, num_warps={expr})\n")
    values = [p.value for p in val.possibles or ()]
    assert values == ([expected] if expected is not None else []) or (
        expected is None and all(isinstance(v, Range) and v.hi is None for v in values)
    )


def test_tuples_module_constants_and_loops():
    source = (
        KERNEL
        + """
DEFAULTS = (128, 32)
def f(x):
    block, warps = DEFAULTS
    k[(1,)](x, BLOCK=block, num_warps=warps)
    for w in [4, 8, 32]:
        k[(1,)](x, BLOCK=64, num_warps=w)
"""
    )
    inv = inventory_for_source(textwrap.dedent(source))
    first, second = inv.launches
    assert first.options["num_warps"].values == [32] and first.meta["BLOCK"].values == [128]
    assert second.options["num_warps"].values == [4, 8, 32]


def test_comprehension_filters_drop_what_they_prune():
    source = (
        KERNEL
        + """
WARPS = [w for w in [1, 2, 4, 8, 16, 32] if w * 64 <= 1024]
def f(x):
    for nw in WARPS:
        k[(1,)](x, BLOCK=64, num_warps=nw)
"""
    )
    _, val = last_launch_val(source)
    assert val.values == [1, 2, 4, 8, 16]


def test_unknown_stays_unknown():
    _, val = last_launch_val(KERNEL + "def f(x, n):\n    k[(1,)](x, BLOCK=64, num_warps=n // 2)\n")
    assert not val.known
    # a helper with one return the folder cannot follow: 32 is possible, but the value is not "only 32"
    source = (
        KERNEL + "def pick(n):\n    if n:\n        return 32\n    return n * 2\n"
        "def f(x, n):\n    k[(1,)](x, BLOCK=64, num_warps=pick(n))\n"
    )
    _, val = last_launch_val(source)
    assert val.partial and val.values == [32] and not val.is_single and val.single is None
    assert flow.value_range(val) is None


def test_vendor_guarded_helper_value_is_not_a_finding_on_amd(rules):
    """Liger's form: `num_warps = 32 if not is_hip() else 16` in the settings helper."""
    source = (
        SETTINGS.replace("num_warps = 32", "num_warps = 32 if not is_hip() else 16")
        + KERNEL
        + "def f(x, n):\n    b, w = calculate_settings(n)\n    k[(1,)](x, BLOCK=b, num_warps=w)\n"
    )
    assert [f for f in analyze_source(source, "m.py", "mi300x", rules) if f.rule == "PT101"] == []


def test_same_module_helper_reported_at_the_origin(rules):
    source = (SETTINGS + KERNEL).lstrip(
        "\n"
    ) + "def f(x, n):\n    b, w = calculate_settings(n)\n    k[(1,)](x, BLOCK=b, num_warps=w)\n"
    (finding,) = [f for f in analyze_source(source, "m.py", "mi300x", rules) if f.rule == "PT101"]
    assert (finding.line, finding.data["value"]) == (U32, 32)
    assert finding.data["launches"] == [f"m.py:{line_of(source, 'num_warps=w')}"]
    assert "4..32 from `calculate_settings(n)`; 32 for BLOCK_SIZE >= 32768" in finding.message
    assert finding.data["origin"]["text"] == "32"


def test_cross_module_helper_found_at_the_origin_naming_its_launches(tmp_path, rules):
    root = write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/utils.py": SETTINGS, "pkg/norm.py": CALLERS})
    result = scan_tree(root, "mi300x", rules, jobs=1, use_cache=False)
    found = sorted((f.path, f.line, tuple(f.data["launches"])) for f in result.findings if f.rule == "PT101")
    assert found == [("pkg/utils.py", U32, (f"pkg/norm.py:{L1}",)), ("pkg/utils.py", UCLAMP, (f"pkg/norm.py:{L2}",))]
    by_line = {f.line: f for f in result.findings}
    assert "32 for block >= 16384" in by_line[UCLAMP].message
    assert "4..32 from `clamp_warps(block)`" in by_line[UCLAMP].message
    assert not [f for f in result.findings if f.path == "pkg/norm.py"]  # the launching module stays quiet


def test_helper_outside_the_scan_is_reported_at_the_launch(tmp_path, rules):
    root = write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/utils.py": SETTINGS, "pkg/norm.py": CALLERS})
    result = scan_tree(root / "pkg" / "norm.py", "mi300x", rules, jobs=1, use_cache=False)
    lines = sorted(f.line for f in result.findings if f.rule == "PT101")
    assert lines == [L1, L2]  # the keyword values at the launches
    origin = next(f for f in result.findings if f.line == L1).data["origin"]
    assert (origin["path"].endswith("pkg/utils.py"), origin["line"], origin["when"]) == (
        True,
        U32,
        "BLOCK_SIZE >= 32768",
    )


def test_reexported_and_absolute_imports_resolve(tmp_path, rules):
    caller = CALLERS.replace("from .utils import", "from pkg import")
    root = write_tree(
        tmp_path,
        {
            "pkg/__init__.py": "from .utils import calculate_settings, clamp_warps\n",
            "pkg/utils.py": SETTINGS,
            "pkg/ops/__init__.py": "",
            "pkg/ops/norm.py": caller,
        },
    )
    result = scan_tree(root, "mi300x", rules, jobs=1, use_cache=False)
    assert sorted((f.path, f.line) for f in result.findings if f.rule == "PT101") == [
        ("pkg/utils.py", U32),
        ("pkg/utils.py", UCLAMP),
    ]


def test_origin_of_maps_a_launch_to_where_its_value_is_set(tmp_path):
    root = write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/utils.py": SETTINGS, "pkg/norm.py": CALLERS})
    origins = flow.origin_of(root, "pkg/norm.py", L1, "num_warps")
    assert [(o["path"], o["line"], o["value"]) for o in origins] == [
        ("pkg/utils.py", U32 - 2, 4),
        ("pkg/utils.py", U32, 32),
        ("pkg/utils.py", U32 + 2, 16),
        ("pkg/utils.py", U32 + 4, 8),
    ]
    assert origins[1]["via"] == "calculate_settings(n_cols)"
    (clamped,) = flow.origin_of(root, "pkg/norm.py", L2, "num_warps")
    assert (clamped["line"], clamped["value"], clamped["when"]) == (UCLAMP, "4..32", "block >= 16384")
    assert flow.origin_of(root, "pkg/norm.py", 3, "num_warps") == []  # no launch on that line


def test_origin_of_reads_autotune_configs_when_the_launch_passes_nothing(tmp_path):
    source = """
    import triton
    import triton.language as tl

    @triton.autotune(configs=[triton.Config({'BLOCK': b}, num_warps=w) for b in [64, 128] for w in [4, 32]], key=['n'])
    @triton.jit
    def k(x, n, BLOCK: tl.constexpr):
        pass

    def f(x, n):
        k[(1,)](x, n)
    """
    root = write_tree(tmp_path, {"m.py": source})
    origins = flow.origin_of(root, "m.py", 10, "num_warps")
    assert sorted({(o["line"], o["value"]) for o in origins}) == [(4, 4), (4, 32)]


def test_value_overwritten_in_a_vendor_branch_is_dead_there(rules):
    source = (
        KERNEL + "def f(x):\n    nw = 32\n    if is_hip():\n        nw = 16\n    k[(1,)](x, BLOCK=64, num_warps=nw)\n"
    )
    assert [f for f in analyze_source(source, "m.py", "mi300x", rules) if f.rule == "PT101"] == []
    assert [
        f.line
        for f in analyze_source(source.replace("is_hip()", "is_cuda()"), "m.py", "mi300x", rules)
        if f.rule == "PT101"
    ] == [9]


def test_helper_with_an_unfollowable_return_still_shows_the_value_that_fails(rules):
    """unsloth's form: a table lookup may override the settings helper's value; 32 is still possible."""
    source = (
        (SETTINGS + KERNEL).lstrip("\n")
        + """
def pick(table, n, num_warps):
    if torch.version.hip:
        return num_warps
    return table.get(n, num_warps)

def launch(kernel, grid, *args, **options):
    kernel[grid](*args, **options)

def f(x, n):
    BLOCK_SIZE, num_warps = calculate_settings(n)
    launch(k, (1,), x, BLOCK=BLOCK_SIZE, num_warps=pick(TABLE, n, num_warps))
"""
    )
    inv = inventory_for_source(source)
    val = inv.launches[-1].options["num_warps"]
    assert val.partial and 32 in val.values and val.single is None
    (finding,) = [f for f in analyze_source(source, "m.py", "mi300x", rules) if f.rule == "PT101"]
    assert finding.line == U32 and "from `pick(TABLE, n, num_warps)`" in finding.message


@pytest.mark.parametrize("warps, severity", [("[4, 8, 32]", "warning"), ("[32]", "error")])
def test_autotune_entry_over_the_limit_is_skipped_when_the_list_has_others(rules, warps, severity):
    source = KERNEL.replace(
        "@triton.jit",
        "@triton.autotune(configs=[triton.Config({'BLOCK': 64}, num_warps=w) "
        f"for w in {warps}], key=['x'])\n@triton.jit",
    )
    (finding,) = [f for f in analyze_source(source, "m.py", "mi300x", rules) if f.rule == "PT101"]
    assert finding.severity == severity and finding.data["skipped_by_autotuner"] is (severity == "warning")


def test_config_builders_are_not_launch_sites():
    source = (
        KERNEL + "def _config(bm, num_warps):\n    return triton.Config({'BLOCK': bm}, num_warps=num_warps)\n"
        "CONFIGS = [_config(64, num_warps=8)]\n"
    )
    assert inventory_for_source(source).launches == []


CALLER_SHAPES = {
    "launch.py": "def go(x):\n    k[(1,)](x, num_warps=8)\n",
    "wrapped.py": (
        "def launch(kern, *a, **kw):\n    kern[(1,)](*a, **kw)\ndef go(x):\n    launch(k, x,\n           num_warps=8)\n"
    ),
    "run.py": "def go(x):\n    k.run(x, grid=(1,), num_warps=8)\n",
    "autotuned.py": (
        "import triton\n\n@triton.autotune(configs=[triton.Config({}, 8)], key=[])\n@triton.jit\ndef k(x):\n    pass\n"
    ),
    "aliased.py": (
        "import triton\nfrom triton import autotune as tune, jit\n\n"
        "@tune(configs=[triton.Config({}, num_warps=8)], key=[])\n@jit\ndef k(x):\n    pass\n"
    ),
    "builder.py": (
        "class Settings:\n    pass\ndef config(**kw):\n    return kw\n"
        "def go(n, num_warps=4):\n    text = 'k[(1,)](num_warps=8)'\n    return Settings(num_warps=8), config(num_warps=8)\n"
    ),
    "other_key.py": "def go(x):\n    k[(1,)](x, num_stages=3)\n",
}


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("launch.py", True),
        ("wrapped.py", True),
        ("run.py", True),
        ("autotuned.py", True),
        ("aliased.py", True),
        ("builder.py", False),  # a local class, a non-launching helper, a default and a string: no launch
        ("other_key.py", False),
    ],
)
def test_callers_that_cannot_carry_the_key_are_not_parsed(tmp_path, name, expected):
    """caller_sites parses (libcst) only the modules whose `ast` shows a launch or autotune config able to
    carry the key: here exactly those where the inventory then finds a site setting it."""
    root = write_tree(tmp_path, {"pkg/__init__.py": "", **{f"pkg/{n}": text for n, text in CALLER_SHAPES.items()}})
    flow.set_project(root)
    try:
        assert flow._may_set(f"pkg/{name}", "num_warps") is expected
        text = (root / "pkg" / name).read_text()
        assert flow.launch_keys_known(text, ast.parse(text))["num_warps"] is expected  # the scan's facts pass
        assert bool(list(flow._sites_of(flow.load(root / "pkg" / name), "num_warps"))) is expected
    finally:
        flow.set_project(None)
