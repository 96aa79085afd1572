"""GPU memory queries through nvidia-smi (PT402): on ROCm the binary is absent, so the same CSV text
is built from porter_shim.gpu_memory_info() (amdsmi or torch), and the NVIDIA branch keeps nvidia-smi."""

from __future__ import annotations

import re

import libcst as cst

from porter.remedy.codemods import codemod
from porter.remedy.codemods._cst import LineScoped, code, finish, string_value, transform

_FIELDS = {  # nvidia-smi query field -> expression over the shim's (free, total) bytes
    "memory.used": "(_porter_total - _porter_free)",
    "memory.total": "_porter_total",
    "memory.free": "_porter_free",
}
_MIB = 2**20


def _smi_query(call: cst.Call) -> tuple[list[str], str, bool, bool] | None:
    """(fields, device index expression, no units, text mode) of a supported nvidia-smi memory query."""
    if not call.args or not isinstance(call.args[0].value, cst.List):
        return None
    elements = [e.value for e in call.args[0].value.elements]
    first = string_value(elements[0]) if elements else None
    if first not in ("nvidia-smi", "/usr/bin/nvidia-smi"):
        return None
    fields, index, fmt = None, None, None
    for element in elements[1:]:
        text = string_value(element)
        if isinstance(element, cst.FormattedString):
            match = re.fullmatch(r"(?:--id=|-i=?)\{(.+)\}", "".join(code(p) for p in element.parts))
            if match is None:
                return None
            index = match.group(1)
        elif text is None:
            return None
        elif text.startswith("--query-gpu="):
            fields = text.split("=", 1)[1].split(",")
        elif text.startswith("--format="):
            fmt = text.split("=", 1)[1].split(",")
        elif id_match := re.fullmatch(r"(?:--id=|-i=?)(\d+)", text):
            index = id_match.group(1)
        else:
            return None
    if not fields or index is None or fmt is None or "noheader" not in fmt or "csv" not in fmt:
        return None
    if any(f.strip() not in _FIELDS for f in fields):
        return None
    text_mode = any(
        a.keyword is not None and a.keyword.value in ("text", "universal_newlines") and code(a.value) == "True"
        for a in call.args[1:]
    ) or any(a.keyword is not None and a.keyword.value == "encoding" for a in call.args[1:])
    return [f.strip() for f in fields], index, "nounits" in fmt, text_mode


class _Smi(LineScoped):
    def leave_SimpleStatementLine(self, original, updated):
        if not self.in_scope(original) or len(updated.body) != 1 or not isinstance(updated.body[0], cst.Assign):
            return updated
        if self.in_nvidia_branch:  # already the NVIDIA side of an IS_HIP branch
            return updated
        assign = updated.body[0]
        call = assign.value
        if not isinstance(call, cst.Call) or not code(call.func).endswith("check_output") or len(assign.targets) != 1:
            return updated
        query = _smi_query(call)
        if query is None:
            self.notes.append(
                f"line {self.line_of(original)}: nvidia-smi call not of a supported shape; left for review"
            )
            return updated
        fields, index, no_units, text_mode = query
        unit = "" if no_units else " MiB"
        parts = [f"{{{_FIELDS[f]} // {_MIB}}}{unit}" for f in fields]
        csv = f'f"{", ".join(parts)}\\n"' + ("" if text_mode else ".encode()")
        name = code(assign.targets[0].target)
        alias = self.ctx.shim_alias
        amd = f"_porter_free, _porter_total = {alias}.gpu_memory_info({index})\n{name} = {csv}\n"
        self.uses_shim = True
        self.changes.append(
            f"line {self.line_of(original)}: nvidia-smi {','.join(fields)} -> porter_shim.gpu_memory_info({index})"
        )
        if self.ctx.exclusive:
            statements = cst.parse_module(amd).body
            first = statements[0].with_changes(leading_lines=original.leading_lines)
            return cst.FlattenSentinel([first, *statements[1:]])
        indented = "".join("    " + line + "\n" for line in amd.splitlines())
        branch = f"if {alias}.IS_HIP:  # nvidia-smi is absent on ROCm: the same CSV from the shim\n{indented}else:\n    pass\n"
        node = cst.parse_statement(branch)
        orelse = node.orelse.with_changes(
            body=node.orelse.body.with_changes(body=[updated.with_changes(leading_lines=[])])
        )
        return node.with_changes(orelse=orelse, leading_lines=original.leading_lines)


@codemod("PT402")
def nvidia_smi_memory(source, findings, target, ctx):
    transformer = _Smi(findings, ctx, target)
    new = transform(source, transformer)  # every edit uses the shim
    rationale = (
        "nvidia-smi does not exist on AMD nodes (FileNotFoundError); on ROCm the memory figures come from "
        "porter_shim.gpu_memory_info() (amdsmi, else torch.cuda.mem_get_info), formatted as the CSV the "
        "code already parses."
    )
    return finish(source, new, transformer, ctx, rationale, target.facts("hbm_bytes"))
