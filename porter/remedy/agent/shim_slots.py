"""Shims written through the agent: the model fills named slots of a skeleton, never a free-form file.

    <<<<<<< SLOT target_branch
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
    >>>>>>> END

The skeleton (templates/agent_shim.py.j2) fixes the module's shape: header, signature, the run-time
branch on the porter shim, and the fallback; the model supplies only the slot bodies.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from porter import __version__
from porter.remedy.agent.edits import EditError
from porter.templating import render_template

SLOT_START = re.compile(r"^<{5,9} SLOT (\w+)\s*$")
SLOT_END = re.compile(r"^>{5,9} END\s*$")
REQUIRED_SLOTS = ("signature", "target_branch", "fallback")
OPTIONAL_SLOTS = ("imports",)


@dataclass(frozen=True)
class ShimRequest:
    """A library call that needs a shim: where it is written and how the main shim is imported."""

    library: str  # e.g. "flash_attn"
    function: str  # e.g. "flash_attn_func"
    path: str  # POSIX path of the shim module to create, relative to the repository root
    shim_import: str  # e.g. "from nvkernels import _porter_shim as porter_shim"


def parse_slots(text: str) -> dict[str, str]:
    slots: dict[str, str] = {}
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        start = SLOT_START.match(lines[index])
        if not start:
            index += 1
            continue
        name, body = start.group(1), []
        index += 1
        while index < len(lines) and not SLOT_END.match(lines[index]):
            body.append(lines[index])
            index += 1
        if index == len(lines):
            raise EditError(f"slot {name} is missing its `>>>>>>> END` line")
        slots[name] = "\n".join(body).strip("\n")
        index += 1
    return slots


def render_agent_shim(request: ShimRequest, slots: dict[str, str], model: str, target: str) -> str:
    missing = [name for name in REQUIRED_SLOTS if not slots.get(name, "").strip()]
    if missing:
        raise EditError(f"the shim needs the slot(s) {', '.join(missing)}")
    unknown = sorted(set(slots) - set(REQUIRED_SLOTS) - set(OPTIONAL_SLOTS))
    if unknown:
        raise EditError(
            f"unknown slot(s) {', '.join(unknown)}; the skeleton has {', '.join(REQUIRED_SLOTS + OPTIONAL_SLOTS)}"
        )
    _check_signature(slots["signature"])
    values = {name: slots.get(name, "") for name in REQUIRED_SLOTS + OPTIONAL_SLOTS}
    return render_template(
        "agent_shim.py.j2",
        version=__version__,
        model=model,
        target=target,
        library=request.library,
        function=request.function,
        shim_import=request.shim_import,
        slots=values,
    )


def _check_signature(signature: str) -> None:
    try:
        ast.parse(f"def f({signature}):\n    pass\n")
    except SyntaxError as error:
        raise EditError(f"slot signature is not a valid parameter list: {error.msg}") from None
