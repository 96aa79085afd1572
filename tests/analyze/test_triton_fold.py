"""The constant folder: literals, constants, arithmetic, branches, calls; unknown stays unknown."""

from __future__ import annotations

import libcst as cst
import pytest

from porter.analyze.triton import inventory_for_source


def fold_last(source: str):
    """Fold the value of the module's last assignment."""
    inv = inventory_for_source(source)
    last = [s for s in inv.module.body if isinstance(s, cst.SimpleStatementLine)][-1].body[0]
    return inv, inv.fold(last.value)


@pytest.mark.parametrize(
    "source, expected",
    [
        ("x = 128", [128]),
        ("x = -4", [-4]),
        ("x = 'tf32'", ["tf32"]),
        ("x = 'tf' '32'", ["tf32"]),
        ("BLOCK = 128\nx = BLOCK * 2 + 1", [257]),
        ("x = 227 * 1024", [232448]),
        ("x = 1 << 5", [32]),
        ("x = 32 if big else 8", [32, 8]),
        ("BIG = False\nx = 32 if BIG else 8", [8]),
        ("import triton\nx = triton.next_power_of_2(1000)", [1024]),
        ("import triton\nx = triton.cdiv(1000, 128)", [8]),
        ("x = min(16, 32)", [16]),
        ("x = [4, 8]", [[4, 8]]),
        ("A = [1, 2]\nx = [*A, 3]", [[1, 2, 3]]),
        ("x = {'BLOCK_M': 64}", [{"BLOCK_M": 64}]),
        ("T = (64, 128)\nx = T[1]", [128]),
        ("W = 4 if a else 8\nx = W * 2", [8, 16]),
        ("x = list(range(2, 5))", []),  # list() is not folded: unknown
        ("x = range(2, 5)", [[2, 3, 4]]),
        ("import itertools\nx = itertools.product([1, 2], [3])", [[(1, 3), (2, 3)]]),
        ("for N in range(3):\n    pass\nx = N", [0, 1, 2]),  # a loop target: any element of the iterable
    ],
)
def test_fold_values(source, expected):
    _, val = fold_last(source)
    assert val.values == expected
    assert val.known == bool(expected)


@pytest.mark.parametrize(
    "source",
    [
        "x = y",  # unbound
        "import os\nx = os.environ['N']",  # runtime value
        "def f(n):\n    pass\nx = f(3)",  # arbitrary call
        "N = 4\nN += 1\nx = N",  # augmented: not followed
        "x = 1 / 0",  # error while folding
        "x = f'{a}'",  # f-string
        "x = 32 if big else y",  # one unknown branch: whole expression unknown
    ],
)
def test_unknown_is_never_guessed(source):
    _, val = fold_last(source)
    assert not val.known and val.values == []


def test_branch_values_keep_their_literal_origin():
    inv, val = fold_last("x = 32 if big else 8")
    origins = {p.value: inv.code(p.node) for p in val.possibles}
    assert origins == {32: "32", 8: "8"}
    assert inv.span(val.possibles[0].node).to_dict() == {"line": 1, "column": 5, "end_line": 1, "end_column": 7}


def test_constant_origin_points_at_its_definition():
    inv, val = fold_last("NW = 32\n\ndef f():\n    return 1\nx = NW")
    assert inv.span(val.possibles[0].node).line == 1


def test_local_scope_shadows_module_constant():
    source = "BLOCK = 64\ndef f():\n    BLOCK = 128\n    y = BLOCK\n"
    inv = inventory_for_source(source)
    function = inv.module.body[1]
    assign = function.body.body[1].body[0]
    assert inv.fold(assign.value).values == [128]


def test_parameter_shadows_module_constant():
    source = "BLOCK = 64\ndef f(BLOCK):\n    y = BLOCK\n"
    inv = inventory_for_source(source)
    assign = inv.module.body[1].body.body[0].body[0]
    assert not inv.fold(assign.value).known


def test_self_reference_does_not_loop():
    _, val = fold_last("x = x + 1")
    assert not val.known


def test_a_vendor_branch_arm_stays_dead_on_the_other_vendor_through_arithmetic():
    # speculators' autotune list: `threads // warp_size` with `warp_size = 64 if hip else 32` is 16 at most on AMD
    _, val = fold_last('import torch\nW = 64 if getattr(torch.version, "hip", None) is not None else 32\nx = 1024 // W')
    assert sorted((p.value, p.dead_on) for p in val.possibles) == [(16, "nvidia"), (32, "amd")]
    # arms of two different vendor tests never meet in one build
    _, val = fold_last("import torch\nA = 2 if torch.version.hip else 1\nB = 3 if torch.version.cuda else 4\nx = A * B")
    assert sorted((p.value, p.dead_on) for p in val.possibles) == [(3, "amd"), (8, "nvidia")]
