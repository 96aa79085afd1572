"""The project's own tests: findings there are reported, never patched (unless the user asks).

A rewrite that edits tests proves nothing: a mocked SM count turned into a live device query, or a skip
condition widened so a test now runs on AMD, changes what the tests check, and the verifier then replays
the changed tests. The planner asks `why_test_code(path, text, finding)`: a reason when the finding is in
a test module (tests/, test_*.py, *_test.py, conftest.py) or, in any module, inside a mock or a skip
condition; None otherwise. `[tool.porter.remedy] patch_tests = true` lets porter patch them.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import PurePosixPath

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from porter.records import Finding

TEST_DIRS = frozenset({"tests", "test", "testing", "unittests"})
_TEST_FILE = re.compile(r"^(test_.*|.*_test|conftest)\.py$")
# call names (last dotted parts) that build a mock or decide whether a test runs
_MOCK_CALLS = re.compile(
    r"(^|\.)(patch(\.object|\.dict|\.multiple)?|setattr|setitem|delattr|MagicMock|Mock|"
    r"NonCallableMock|PropertyMock|AsyncMock|create_autospec)$"
)
_SKIP_CALLS = re.compile(r"(^|\.)(skipif|skipIf|skipUnless|skip|xfail|importorskip|SkipTest|requires_cuda)$")
_MONKEYPATCH_OWNER = re.compile(r"(^|\.)(monkeypatch|mock|mocker|unittest\.mock|patch)$")


def is_test_path(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return bool(_TEST_FILE.match(parts[-1])) or any(part in TEST_DIRS for part in parts[:-1])


def why_test_code(path: str, text: str | None, finding: Finding) -> str | None:
    """Why porter leaves this finding's code alone, or None when it may patch it."""
    if is_test_path(path):
        return f"{path} is one of the project's tests"
    if text is None:
        return None
    for start, end, what in _guarded_spans(text):
        if start <= max(finding.end_line, finding.line) and end >= finding.line:
            return f"{path}:{finding.line} is inside {what}"
    return None


@lru_cache(maxsize=256)
def _guarded_spans(text: str) -> tuple[tuple[int, int, str], ...]:
    try:
        wrapper = MetadataWrapper(cst.parse_module(text))
    except cst.ParserSyntaxError:
        return ()
    collector = _Spans()
    wrapper.visit(collector)
    return tuple(collector.spans)


def _name(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_name(node.value)}.{node.attr.value}"
    if isinstance(node, cst.Call):
        return _name(node.func)
    return ""


class _Spans(cst.CSTVisitor):
    """Line spans of mocks (patch(...), monkeypatch.setattr(...), Mock(...)) and skip conditions
    (skipif(...) decorators and calls, `if <cond>: pytest.skip(...)`)."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self) -> None:
        super().__init__()
        self.spans: list[tuple[int, int, str]] = []

    def _add(self, node: cst.CSTNode, what: str) -> None:
        pos = self.get_metadata(PositionProvider, node)
        self.spans.append((pos.start.line, pos.end.line, what))

    def visit_Call(self, node: cst.Call) -> None:
        name = _name(node.func)
        if _SKIP_CALLS.search(name):
            self._add(node, f"a skip condition ({name})")
        elif _MOCK_CALLS.search(name) and (
            not name.endswith(("setattr", "setitem", "delattr"))
            or _MONKEYPATCH_OWNER.search(name.rsplit(".", 1)[0] if "." in name else "")
        ):
            self._add(node, f"a mock ({name})")

    def visit_If(self, node: cst.If) -> None:
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
        calls = [
            small.value if isinstance(small, cst.Expr) else small.exc
            for stmt in body
            if isinstance(stmt, cst.SimpleStatementLine)
            for small in stmt.body
            if isinstance(small, cst.Expr) or (isinstance(small, cst.Raise) and small.exc)
        ]
        if any(_SKIP_CALLS.search(_name(call)) for call in calls if call is not None):
            self._add(node.test, "a skip condition (if ...: skip)")
