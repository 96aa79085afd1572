"""What a model edit may not add unreviewed: secrets, and calls that reach outside a kernel's logic.

A port rewrites numerics and launch parameters; it has no reason to start processes, open sockets,
write or delete files, evaluate strings, load native code or read the environment. A model edit
that adds any of these (compared with the file before the edit, so code already there is not held
against it) is flagged for review and never auto-applied or run. So is one that adds a secret's
value or names a secret-holding environment variable.
"""

from __future__ import annotations

import ast
from collections import Counter

from porter.discover.source import parse_hazard
from porter.secrets import contains_secret, is_secret_name

RISKY_MODULES = frozenset(
    {
        "subprocess",
        "socket",
        "ctypes",
        "cffi",
        "urllib",
        "http",
        "requests",
        "httpx",
        "aiohttp",
        "ftplib",
        "smtplib",
        "telnetlib",
        "pty",
        "shutil",
        "multiprocessing",
        "webbrowser",
        "paramiko",
        "asyncio.subprocess",
        "pickle",
        "marshal",
    }
)
RISKY_CALLS = frozenset(
    {
        "eval",
        "exec",
        "compile",
        "__import__",
        "breakpoint",
        "importlib.import_module",
        "os.system",
        "os.popen",
        "os.fork",
        "os.forkpty",
        "os.kill",
        "os.killpg",
        "os.remove",
        "os.unlink",
        "os.rmdir",
        "os.removedirs",
        "os.rename",
        "os.renames",
        "os.replace",
        "os.mkdir",
        "os.makedirs",
        "os.chmod",
        "os.chown",
        "os.symlink",
        "os.link",
        "os.truncate",
        "os.open",
        "os.write",
        "os.getenv",
        "os.putenv",
        "os.unsetenv",
        "os.setuid",
        "os.chdir",
        "os.listdir",
        "os.scandir",
        "os.walk",
    }
)
RISKY_PREFIXES = (
    "os.exec",
    "os.spawn",
    "os.posix_spawn",
    "os.environ",
    "subprocess.",
    "socket.",
    "ctypes.",
    "shutil.",
    "urllib.",
    "http.",
    "requests.",
    "httpx.",
    "pty.",
    "multiprocessing.",
    "sys.modules",
)
RISKY_METHODS = frozenset(
    {
        "write_text",
        "write_bytes",
        "unlink",
        "rmdir",
        "rmtree",
        "touch",
        "symlink_to",
        "hardlink_to",
        "chmod",
        "rename",
        "replace",
        "mkdir",
    }
)
_WRITE_MODES = set("wax+")


def review_edit(path: str, before: str | None, after: str, secrets: list[str] | tuple[str, ...] = ()) -> list[str]:
    """Why the edit before -> after of `path` must not be accepted unreviewed ([] when it may)."""
    if contains_secret(after, secrets) and not contains_secret(before or "", secrets):
        return [f"{path}: the change adds a secret value"]
    if not path.endswith(".py"):
        return []
    added = _uses(after) - _uses(before or "")
    return [f"{path}: the change adds {use}" for use in sorted(added)]


def _uses(text: str) -> Counter:
    if parse_hazard(text):
        return Counter({"code porter cannot inspect": 1})
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return Counter({"code porter cannot inspect": 1})
    uses: Counter = Counter()
    for node in ast.walk(tree):
        uses.update(_node_uses(node))
    return uses


def _node_uses(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [f"import {alias.name}" for alias in node.names if _risky_module(alias.name)]
    if isinstance(node, ast.ImportFrom):
        module = node.module or ""
        return [
            f"from {module} import {alias.name}"
            for alias in node.names
            if _risky_module(module) or _risky_name(f"{module}.{alias.name}")
        ]
    if isinstance(node, ast.Call):
        return _call_uses(node)
    if isinstance(node, ast.Attribute) and node.attr in ("environ", "environb", "__builtins__", "__globals__"):
        return [f"access to {_dotted(node) or node.attr}"]
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and is_secret_name(node.value):
        return [f"a reference to the secret variable {node.value}"]
    return []


def _call_uses(node: ast.Call) -> list[str]:
    name = _dotted(node.func)
    if name and _risky_name(name):
        return [f"a call to {name}"]
    if isinstance(node.func, ast.Attribute) and node.func.attr in RISKY_METHODS:
        return [f"a call to .{node.func.attr}()"]
    if name in ("open", "io.open", "builtins.open") or (
        isinstance(node.func, ast.Attribute) and node.func.attr == "open"
    ):
        mode = _open_mode(node)
        if mode is None or _WRITE_MODES & set(mode):
            return [f"{name or 'open'}() for writing" if mode else f"{name or 'open'}() with a computed mode"]
    return []


def _open_mode(node: ast.Call) -> str | None:
    """The mode argument of an open() call: '' when absent (read), None when not a literal."""
    candidates = [kw.value for kw in node.keywords if kw.arg == "mode"]
    position = 1 if _dotted(node.func) in ("open", "io.open", "builtins.open") else 0  # path.open(mode)
    if not candidates and len(node.args) > position:
        candidates = [node.args[position]]
    if not candidates:
        return ""
    value = candidates[0]
    return value.value if isinstance(value, ast.Constant) and isinstance(value.value, str) else None


def _risky_module(name: str) -> bool:
    return name in RISKY_MODULES or name.split(".")[0] in RISKY_MODULES


def _risky_name(name: str) -> bool:
    return name in RISKY_CALLS or name.startswith(RISKY_PREFIXES)


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""
