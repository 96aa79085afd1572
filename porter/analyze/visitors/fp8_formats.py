"""Visitors for PT206 / PT207 / PT224: OCP fp8 formats and their bounds where code produces fp8 data.

Naming an fp8 dtype is not a defect: dtype tables, membership tests, probes, storage round trips and
fake-tensor metas all work on gfx942. What breaks there is *producing* OCP fp8 values for the GPU to
compute with: a quantizing cast to float8_e4m3fn, the OCP range taken from torch.finfo to compute scales,
the output buffer a Triton quantizer writes, a quantizer's default output format; and the 448 bound
written into a quantizer whose output dtype the caller picks (the fnuz dtype saturates at 240).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

import libcst as cst

from porter.analyze.guards import ROCM, only_on_cuda, platform_of_test
from porter.analyze.index import literal_value
from porter.analyze.visitors import Hit, ModuleContext, register
from porter.analyze.visitors.pytorch import (
    ALLOCATORS,
    _enclosing_function,
    _in_main_block,
    and_operands,
    descendants,
    dtype_parameter_makes_data,
)
from porter.analyze.visitors.triton_common import (
    KernelConsumer,
    defines_triton_kernels,
    fp8_kernel_consumers,
    is_triton_kernel,
)

OCP_TORCH = {"torch.float8_e4m3fn", "torch.float8_e5m2"}
OCP_TRITON = {"triton.language.float8e4nv", "triton.language.float8e5"}
_SCALING_CALLS = {"clamp", "clamp_", "clip", "clamp_min", "clamp_max", "minimum", "maximum", "round", "div", "mul"}
_CHECKS = (cst.Equal, cst.NotEqual, cst.Is, cst.IsNot, cst.In, cst.NotIn)
# MX and NVFP4 formats define their elements and scales as OCP e4m3: the OCP dtype is right there on every GPU.
_OCP_BY_SPEC = re.compile(r"(?i)(^|[_/])mx|mxfp|nvfp4|(^|[_/])fp4|e8m0")
_QUANTIZER = re.compile(r"(?i)quant")
_FP8_CONTEXT = re.compile(r"(?i)fp8|float8|f8|e4m3|quant|scale|amax")


def _tail(node: cst.CSTNode) -> str | None:
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return node.value if isinstance(node, cst.Name) else None


def _parameter_names(function: cst.FunctionDef) -> set[str]:
    params = function.params
    return {p.name.value for p in (*params.params, *params.kwonly_params, *params.posonly_params)}


def _launches_kernel(function: cst.FunctionDef) -> bool:
    """`kernel[grid](...)` somewhere in the function body."""
    return any(isinstance(n, cst.Call) and isinstance(n.func, cst.Subscript) for n in descendants(function))


def _is_check(ctx: ModuleContext, node: cst.CSTNode) -> bool:
    """Compared with, tested for membership, or a key of a dtype table: the dtype is read, not produced."""
    parent = ctx.parent(node)
    if isinstance(parent, cst.Element):  # one of a tuple/list/set: judge the container
        container = ctx.parent(parent)
        if container is None:
            return False
        node, parent = container, ctx.parent(container)
    if isinstance(parent, cst.ComparisonTarget):
        return isinstance(parent.operator, _CHECKS)
    if isinstance(parent, cst.Comparison):
        return all(isinstance(c.operator, _CHECKS) for c in parent.comparisons)
    return isinstance(parent, cst.DictElement) and parent.key is node


_NAMED_FOR_OCP = re.compile(r"(?i)e4m3fn|e5m2(?!fnuz)")
_E8M0 = re.compile(r"(?i)e8m0(?!\w*\s*=\s*False)")  # `scale_ue8m0=False` turns them off


def _format_specific(ctx: ModuleContext, node: cst.CSTNode) -> bool:
    """The function is the OCP format's own variant (`_quant_fp8_e4m3fn`, chosen by a dtype dispatch), or pairs
    the fp8 data with E8M0 power-of-two scales (MX / DeepGEMM layouts, OCP e4m3 by spec)."""
    function = _enclosing_function(ctx, node)
    if function is None:
        return False
    return _NAMED_FOR_OCP.search(function.name.value) is not None or _E8M0.search(ctx.code_for(function)) is not None


_TEST_OR_BENCH = re.compile(r"^(test_|bench)")


def _test_or_benchmark(ctx: ModuleContext, node: cst.CSTNode) -> bool:
    """A test or benchmark function of the module, or its `if __name__ == "__main__":` block: not the library."""
    return any(_TEST_OR_BENCH.match(name) for name in ctx.scope_names(node)) or _in_main_block(ctx, node)


def _ocp_by_spec(ctx: ModuleContext, node: cst.CSTNode) -> bool:
    """In MX / NVFP4 code: a function, class or module (its path) named for those formats."""
    return any(_OCP_BY_SPEC.search(name) for name in (*ctx.scope_names(node), ctx.path))


# ---- PT206: OCP fp8 data produced for the GPU ------------------------------------------------------


@register("fp8_ocp_data")
def fp8_ocp_data(ctx: ModuleContext, rule, target) -> Iterable[Hit]:
    """PT206: an OCP fp8 dtype that makes data: a quantizing cast, the torch.finfo range used for scales,
    a Triton quantizer's output buffer, the default output format of a quantizer's dtype parameter; in a module
    whose data meets Triton code compiled for the target (its own kernels, or the project's kernel module in
    another file, which the data is handed to)."""
    own = defines_triton_kernels(ctx)
    if own and "inline_asm_elementwise" in ctx.text:
        return  # kernels written in inline PTX cannot run on AMD at all (PT109's finding)
    aware = "fnuz" in ctx.text  # the module converts for gfx942 somewhere: worth a look, not an error
    for node in [*ctx.nodes(cst.Attribute), *ctx.nodes(cst.Name)]:
        if _tail(node) not in ("float8_e4m3fn", "float8_e5m2"):
            continue
        names = ctx.qualified_names(node) & OCP_TORCH
        if not names or _is_check(ctx, node) or _ocp_by_spec(ctx, node) or _test_or_benchmark(ctx, node):
            continue
        if _format_specific(ctx, node):
            continue
        data = _producing_use(ctx, node)
        if data is None:
            continue
        if own:
            if _decodes_only(ctx):
                return
            consumers = []
        else:
            # the data feeds no code compiled for the target unless a project kernel meets it (a torch._scaled_mm
            # call is PT208's)
            consumers = [c for c in _compiled_consumers(ctx, node) if not _decodes_only(c.ctx)]
            if not consumers or not _reaches_consumer(ctx, node, data, consumers):
                continue
        data["qualified_name"] = min(names)
        if consumers:
            data["role"] += f", handed to the project's Triton kernels through {_named(consumers)}"
            data["consumers"] = [{"function": c.name, "path": c.path} for c in consumers]
        if aware:
            yield Hit(node, {**data, "module_handles": "fnuz"}, severity="info")
        else:
            yield Hit(node, data)


def _decodes_only(kernel_module: ModuleContext) -> bool:
    """_kernels_widen_before_dots, once per module (it walks every kernel)."""
    if "decodes_only" not in kernel_module.cache:
        kernel_module.cache["decodes_only"] = _kernels_widen_before_dots(kernel_module)
    return kernel_module.cache["decodes_only"]


def _compiled_consumers(ctx: ModuleContext, node: cst.CSTNode) -> list[KernelConsumer]:
    """The project functions this module calls that launch Triton kernels (in another module) the data made at
    `node` may meet, leaving out modules of inline-PTX kernels, which cannot run on AMD at all (PT109)."""
    return [c for c in fp8_kernel_consumers(ctx, node) if "inline_asm_elementwise" not in c.ctx.text]


def _reaches_consumer(ctx: ModuleContext, node: cst.CSTNode, data: dict, consumers: list[KernelConsumer]) -> bool:
    """The fp8 data made at `node` is handed to a consumer call: the cast or buffer is its argument, or the local
    or attribute it is assigned to (`self.weight = nn.Parameter(torch.empty(..., dtype=dtype))`, then
    `fp8_gemm(x, self.weight)` in a method of the class) is read in one. A torch.finfo range sets scales, not data:
    the function computing them calls the consumer itself. A quantize-dequantize round trip (`.to(e4m3fn).to(
    torch.float32)`) or a value handed only to a vendor kernel never reaches the project's kernels as fp8."""
    sites = [site for consumer in consumers for site in consumer.sites]
    if "finfo" in data["role"]:
        function = _enclosing_function(ctx, node)
        return function is not None and any(_hands_over(ctx, made, sites) for made in _ocp_data_calls(ctx, function))
    return any(_hands_over(ctx, made, sites) for made in _data_calls(ctx, node, data))


def dtype_parameter_reaches_project_kernels(ctx: ModuleContext, function: cst.FunctionDef, name: cst.Name) -> bool:
    """PT221's test for a module without kernels of its own: data the function makes with its dtype parameter is
    handed to a function of another project module defining Triton kernels that work on fp8."""
    sites = [site for consumer in _compiled_consumers(ctx, name) for site in consumer.sites]
    made = [
        call
        for call in descendants(function.body)
        if isinstance(call, cst.Call)
        and any(isinstance(a.value, cst.Name) and a.value.value == name.value for a in call.args)
    ]
    return bool(sites) and any(_hands_over(ctx, call, sites) for call in made)


def _hands_over(ctx: ModuleContext, made: cst.Call, sites: list[cst.Call]) -> bool:
    """The value of `made` is an argument of a consumer call, itself or through the local or attribute it is
    assigned to; not when it is widened back at once (a quantize-dequantize simulation)."""
    if _round_trip(ctx, made):
        return False
    if any(_inside(ctx, made, site) for site in sites):
        return True
    holder = _assigned_to(ctx, made)
    return holder is not None and any(_reads(ctx, site, holder, made) for site in sites)


_WIDE_TORCH = {"torch.float32", "torch.float", "torch.float16", "torch.half", "torch.bfloat16", "torch.float64"}


def _round_trip(ctx: ModuleContext, made: cst.Call) -> bool:
    """`(x / s).to(torch.float8_e4m3fn).to(torch.float32)` (or `.float()`): fp8 rounding simulated in a wide
    dtype, the values computed with are never fp8."""
    parent = ctx.parent(made)
    if not (isinstance(parent, cst.Attribute) and parent.value is made):
        return False
    call = ctx.parent(parent)
    if not isinstance(call, cst.Call):
        return False
    if parent.attr.value in ("float", "half", "bfloat16", "double"):
        return True
    return parent.attr.value == "to" and any(ctx.qualified_names(arg.value) & _WIDE_TORCH for arg in call.args)


def _ocp_data_calls(ctx: ModuleContext, function: cst.FunctionDef) -> list[cst.Call]:
    """The casts to and allocations with a literal OCP fp8 dtype in the function."""
    return [
        call
        for call in descendants(function.body)
        if isinstance(call, cst.Call)
        and _tail(call.func) in (*ALLOCATORS, "to")
        and any(ctx.qualified_names(arg.value) & OCP_TORCH for arg in call.args)
    ]


def _data_calls(ctx: ModuleContext, node: cst.CSTNode, data: dict) -> list[cst.Call]:
    """The calls that make the data: the cast or allocation naming the dtype, those using a dtype parameter
    whose default it is, or the one reading the alias it is bound to (data["use"])."""
    parent = ctx.parent(node)
    if isinstance(parent, cst.Param) and parent.default is node:
        function = _enclosing_function(ctx, parent)
        name = parent.name.value
        return [
            call
            for call in (descendants(function.body) if function is not None else ())
            if isinstance(call, cst.Call)
            and any(isinstance(a.value, cst.Name) and a.value.value == name for a in call.args)
        ]
    call = ctx.parent(parent) if isinstance(parent, cst.Arg) else None
    if isinstance(call, cst.Call):
        return [call]
    line = (data.get("use") or {}).get("line")
    return [
        call
        for call in ctx.nodes(cst.Call)
        if line is not None and ctx.position(call).start.line == line and _tail(call.func) in (*ALLOCATORS, "to")
    ]


def _assigned_to(ctx: ModuleContext, made: cst.CSTNode) -> cst.BaseExpression | None:
    """The single target (`w8`, `self.weight`) of the assignment whose value holds the call, through wrappers
    (`nn.Parameter(...)`, `.view(...)`): not through another call's argument list of a different kind."""
    for ancestor in ctx.ancestors(made):
        if isinstance(ancestor, cst.Assign):
            targets = ancestor.targets
            return targets[0].target if len(targets) == 1 else None
        if isinstance(ancestor, (cst.BaseStatement, cst.BaseSmallStatement)):
            return None
    return None


def _reads(ctx: ModuleContext, site: cst.Call, holder: cst.BaseExpression, made: cst.CSTNode) -> bool:
    """The consumer call reads the holder: a local in the same function, or `self.<attr>` in the same class."""
    wanted = ctx.code_for(holder).strip()
    scope: cst.CSTNode | None
    if isinstance(holder, cst.Name):
        scope = _enclosing_function(ctx, made)
    elif isinstance(holder, cst.Attribute) and isinstance(holder.value, cst.Name) and holder.value.value == "self":
        scope = next((a for a in ctx.ancestors(made) if isinstance(a, cst.ClassDef)), None)
    else:
        return False
    if scope is None or not _inside(ctx, site, scope):
        return False
    return any(
        isinstance(n, (cst.Name, cst.Attribute)) and ctx.code_for(n).strip() == wanted
        for arg in site.args
        for n in (arg.value, *descendants(arg.value))
    )


def _inside(ctx: ModuleContext, node: cst.CSTNode, scope: cst.CSTNode) -> bool:
    return any(a is scope for a in ctx.ancestors(node))


def _named(consumers: list[KernelConsumer]) -> str:
    first = consumers[0]
    more = f" (and {len(consumers) - 1} more)" if len(consumers) > 1 else ""
    return f"`{first.name}` ({first.path}){more}"


_TL_DOT = {"triton.language.dot"}
_TL_WIDE = {"triton.language.float16", "triton.language.bfloat16", "triton.language.float32"}


def _kernels_widen_before_dots(ctx: ModuleContext) -> bool:
    """The module's kernels multiply only widened values: every `tl.dot` operand is cast to fp16, bf16 or fp32
    first (itself, or the local it is bound to in the kernel), and no kernel casts to an OCP fp8 type. The OCP
    data the module quantizes with torch is then a storage format that its own kernels decode in software:
    both ends use the same format on every GPU, and no fp8 MMA (whose format gfx942 fixes) sees it. A module
    without dots says nothing about its data's consumer (a quantizer feeding another module's GEMM)."""
    kernels = [f for f in ctx.nodes(cst.FunctionDef) if is_triton_kernel(ctx, f)]
    dots = [
        (kernel, node)
        for kernel in kernels
        for node in descendants(kernel.body)
        if isinstance(node, cst.Call) and _is_call_to(ctx, node, _TL_DOT)
    ]
    if not dots:
        return False
    if any(_casts_to_ocp(ctx, node) for kernel in kernels for node in descendants(kernel.body)):
        return False
    return all(_widened(ctx, kernel, operand) for kernel, dot in dots for operand in _dot_operands(dot))


def _dot_operands(dot: cst.Call) -> list[cst.BaseExpression]:
    positional = [arg.value for arg in dot.args if arg.keyword is None][:2]
    keywords = [
        arg.value for arg in dot.args if arg.keyword is not None and arg.keyword.value in ("a", "b", "input", "other")
    ]
    return positional + keywords


def _is_call_to(ctx: ModuleContext, node: cst.CSTNode, names: set[str]) -> bool:
    return isinstance(node, cst.Call) and bool(ctx.qualified_names(node.func) & names)


def _casts_to_ocp(ctx: ModuleContext, node: cst.CSTNode) -> bool:
    """`x.to(tl.float8e4nv)`: the kernel encodes OCP fp8 itself."""
    return (
        isinstance(node, cst.Call)
        and _tail(node.func) == "to"
        and bool(node.args)
        and bool(ctx.qualified_names(node.args[0].value) & OCP_TRITON)
    )


def _widened(ctx: ModuleContext, kernel: cst.FunctionDef, operand: cst.CSTNode, depth: int = 0) -> bool:
    """`q.to(tl.float16)`, `tl.trans(k)` of a widened k, or a local whose every assignment in the kernel widens."""
    if isinstance(operand, cst.Call) and _tail(operand.func) == "to" and operand.args:
        return bool(ctx.qualified_names(operand.args[0].value) & _TL_WIDE)
    if isinstance(operand, cst.Call) and _tail(operand.func) == "trans" and operand.args:
        return _widened(ctx, kernel, operand.args[0].value, depth)
    if isinstance(operand, cst.BinaryOperation):  # `k_fp8.to(tl.float32) * sk`: promoted to the wide side
        return _widened(ctx, kernel, operand.left, depth) or _widened(ctx, kernel, operand.right, depth)
    if not isinstance(operand, cst.Name) or depth > 3:
        return False
    values = [
        node.value
        for node in descendants(kernel.body)
        if isinstance(node, cst.Assign)
        and any(isinstance(t.target, cst.Name) and t.target.value == operand.value for t in node.targets)
    ]
    return bool(values) and all(_widened(ctx, kernel, value, depth + 1) for value in values)


def _producing_use(ctx: ModuleContext, node: cst.CSTNode) -> dict | None:
    """The finding's data when the reference makes fp8 data, itself or through the name it is bound to
    (`FP8_DTYPE = torch.float8_e4m3fn`, then `.to(FP8_DTYPE)` in a quantizer)."""
    role = _producing_role(ctx, node)
    if role is not None:
        return {"role": role}
    parent = ctx.parent(node)
    if not (isinstance(parent, cst.Assign) and parent.value is node and len(parent.targets) == 1):
        return None
    alias = parent.targets[0].target
    if not isinstance(alias, cst.Name):
        return None
    scope = _enclosing_function(ctx, parent)  # a local alias is read in its own function only
    uses = descendants(scope.body) if scope is not None else iter(ctx.nodes(cst.Name))
    for use in uses:
        if not isinstance(use, cst.Name) or use.value != alias.value or use is alias:
            continue
        role = _producing_role(ctx, use)
        if role is not None:
            line = ctx.position(use).start.line
            return {"role": f"bound to {alias.value}: {role} on line {line}", "use": {"line": line}}
    return None


def _producing_role(ctx: ModuleContext, node: cst.CSTNode) -> str | None:
    parent = ctx.parent(node)
    if isinstance(parent, cst.Param) and parent.default is node:
        function = _enclosing_function(ctx, parent)
        if function is not None and dtype_parameter_makes_data(function, parent.name.value):
            return "the default output format of a quantizer"
        return None
    if not isinstance(parent, cst.Arg):
        return None
    call = ctx.parent(parent)
    if not isinstance(call, cst.Call):
        return None
    tail = _tail(call.func)
    if tail == "finfo":
        return None if _compared(ctx, call) else "its torch.finfo range sets the scales"
    if tail == "to" and isinstance(call.func, cst.Attribute) and _quantizes(ctx, call):
        return "a quantizing cast"
    if tail in ALLOCATORS and parent.keyword is not None and parent.keyword.value == "dtype":
        function = _enclosing_function(ctx, call)
        if function is not None and _launches_kernel(function) and not _declares_only(ctx, call, function):
            return "the buffer a Triton kernel quantizes into"
    return None


def _declares_only(ctx: ModuleContext, node: cst.CSTNode, function: cst.FunctionDef) -> bool:
    """In a lambda or a decorator of the function: a fake-tensor meta declaring the output, not the buffer."""
    for ancestor in ctx.ancestors(node):
        if ancestor is function:
            return False
        if isinstance(ancestor, (cst.Lambda, cst.Decorator)):
            return True
    return False


def _compared(ctx: ModuleContext, node: cst.CSTNode) -> bool:
    """`scale > torch.finfo(...).min`: the range is read to test a value, not to make one."""
    parent = ctx.parent(node)
    while isinstance(parent, (cst.Attribute, cst.Subscript)):
        parent = ctx.parent(parent)
    return isinstance(parent, (cst.Comparison, cst.ComparisonTarget))


def _quantizes(ctx: ModuleContext, cast: cst.Call) -> bool:
    """The cast's operand is scaled or clamped, or the cast sits in a quantizer (`quantize_fp8`): a
    quantization, not a storage round trip (`x.to(torch.float8_e4m3fn) if store_fp8 else x`)."""
    assert isinstance(cast.func, cst.Attribute)
    return _scales(cast.func.value) or any(_QUANTIZER.search(name) for name in ctx.scope_names(cast))


def _scales(expression: cst.CSTNode) -> bool:
    for node in descendants(expression):
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Multiply, cst.Divide)):
            return True
        if isinstance(node, cst.Call) and _tail(node.func) in _SCALING_CALLS:
            return True
    return False


# ---- PT207: the 448 bound in a quantizer whose output dtype the caller picks --------------------------


@register("fp8_max_literal_for_callers_dtype")
def fp8_max_literal_for_callers_dtype(ctx: ModuleContext, rule, target) -> Iterable[Hit]:
    """PT207: 448 (the OCP e4m3 maximum) scales or clamps values that are cast to a dtype the caller
    chooses (`.to(y_ptr.dtype.element_ty)`, `.to(dtype)`): with float8_e4m3fnuz they overflow its 240."""
    for node in [*ctx.nodes(cst.Float), *ctx.nodes(cst.Integer)]:
        if literal_value(node) != 448:
            continue
        if not _FP8_CONTEXT.search(_surroundings(ctx, node)) or _ocp_by_spec(ctx, node):
            continue
        if _test_or_benchmark(ctx, node):
            continue
        function = _enclosing_function(ctx, node)
        readers = [function] if function is not None else _functions_reading(ctx, _assigned_names(ctx, node))
        for reader in readers:
            cast = _callers_dtype_cast(ctx, reader)
            if cast is not None:
                data: dict = {"value": literal_value(node), "cast": ctx.code_for(cast).strip()}
                uses = list(_uses_of_assigned_name(ctx, node, reader))
                if uses:
                    data["uses"] = uses
                yield Hit(node, data)
                break


def _assigned_names(ctx: ModuleContext, literal: cst.CSTNode) -> set[str]:
    """`max_fp8 = 448.0` / `FP8_MAX: tl.constexpr = 448.0`: {"max_fp8"}; anything else: empty."""
    statement = ctx.statement_of(literal)
    assign = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None
    if isinstance(assign, cst.Assign):
        targets = [t.target for t in assign.targets]
    elif isinstance(assign, cst.AnnAssign):
        targets = [assign.target]
    else:
        return set()
    return {t.value for t in targets if isinstance(t, cst.Name)}


def _functions_reading(ctx: ModuleContext, names: set[str]) -> list[cst.FunctionDef]:
    """The functions of the module that read a module-level constant."""
    readers: list[cst.FunctionDef] = []
    for function in ctx.nodes(cst.FunctionDef):
        if names and any(isinstance(n, cst.Name) and n.value in names for n in descendants(function.body)):
            readers.append(function)
    return readers


def _surroundings(ctx: ModuleContext, node: cst.CSTNode) -> str:
    statement = ctx.statement_of(node)
    text = ctx.code_for(statement) if isinstance(statement, cst.SimpleStatementLine) else ""
    return "\n".join((*ctx.scope_names(node), text))


def _callers_dtype_cast(ctx: ModuleContext, function: cst.FunctionDef) -> cst.CSTNode | None:
    """The `.to(...)` argument that names a dtype the caller picks, when the function casts to no OCP
    dtype of its own (a quantizer hard-wired to e4m3fn is consistent with 448: PT206's business)."""
    params = _parameter_names(function)
    found = None
    for node in descendants(function.body):
        if not (isinstance(node, cst.Call) and _tail(node.func) == "to" and node.args):
            continue
        dtype = node.args[0].value
        if ctx.qualified_names(dtype) & (OCP_TORCH | OCP_TRITON):
            return None
        if _is_pointer_element_type(dtype, params) or isinstance(dtype, cst.Name) and dtype.value in params:
            found = dtype
    if found is None:
        return None
    if is_triton_kernel(ctx, function) and not _launchers_pass_callers_dtype(ctx, function):
        return None
    return found


def _is_pointer_element_type(node: cst.CSTNode, params: set[str]) -> bool:
    """`y_ptr.dtype.element_ty` with y_ptr a kernel parameter."""
    return (
        isinstance(node, cst.Attribute)
        and node.attr.value == "element_ty"
        and isinstance(node.value, cst.Attribute)
        and node.value.attr.value == "dtype"
        and isinstance(node.value.value, cst.Name)
        and node.value.value.value in params
    )


def _launchers_pass_callers_dtype(ctx: ModuleContext, kernel: cst.FunctionDef) -> bool:
    """A Triton kernel's output dtype comes from its launcher's buffer. The launchers of this kernel in
    the module (else every launching function, when the kernel is launched through an alias) allocate a
    buffer with a dtype taken from their own parameters, and none with a literal OCP dtype."""
    launchers = [f for f in ctx.nodes(cst.FunctionDef) if f is not kernel and _launches(f, kernel.name.value)]
    if not launchers:
        launchers = [f for f in ctx.nodes(cst.FunctionDef) if f is not kernel and _launches_kernel(f)]
    verdicts = [_allocation_dtype(ctx, f) for f in launchers]
    return "parameter" in verdicts and "ocp" not in verdicts


def _launches(function: cst.FunctionDef, kernel: str) -> bool:
    for node in descendants(function):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Subscript) and _tail(node.func.value) == kernel:
            return True
    return False


def _allocation_dtype(ctx: ModuleContext, function: cst.FunctionDef) -> str | None:
    """'ocp' when the function allocates with a literal OCP fp8 dtype, 'parameter' when with one of its
    own parameters, else None."""
    params = _parameter_names(function)
    verdict = None
    for node in descendants(function.body):
        if not (isinstance(node, cst.Call) and _tail(node.func) in ALLOCATORS):
            continue
        for arg in node.args:
            if arg.keyword is None or arg.keyword.value != "dtype":
                continue
            if ctx.qualified_names(arg.value) & OCP_TORCH:
                return "ocp"
            if isinstance(arg.value, cst.Name) and arg.value.value in params:
                verdict = "parameter"
    return verdict


def _uses_of_assigned_name(ctx: ModuleContext, literal: cst.CSTNode, function: cst.FunctionDef) -> Iterator[dict]:
    """`max_fp8 = 448.0`: the lines of the function that read max_fp8 (they change with the bound)."""
    names = _assigned_names(ctx, literal)
    if not names:
        return
    lines: set[int] = set()
    for node in descendants(function.body):
        if isinstance(node, cst.Name) and node.value in names and not _is_assign_target(ctx, node):
            lines.add(ctx.position(node).start.line)
    for line in sorted(lines):
        yield {"line": line}


def _is_assign_target(ctx: ModuleContext, name: cst.Name) -> bool:
    parent = ctx.parent(name)
    return isinstance(parent, (cst.AssignTarget, cst.AnnAssign)) and getattr(parent, "target", None) is name


# ---- PT224: an e4m3fn-or-else split whose else branch takes e5m2's bound -------------------------------

# torch.finfo(torch.float8_e5m2).max: a property of the OCP e5m2 format itself, the same on every target.
E5M2_MAX = 57344
_E4M3FN = "torch.float8_e4m3fn"
_E5M2 = "torch.float8_e5m2"
# the fp8 dtypes besides e4m3fn: a test for one of them on the checked expression means the code tells them apart
_OTHER_FP8 = {_E5M2, "torch.float8_e4m3fnuz", "torch.float8_e5m2fnuz"}
_MATCHES = (cst.Equal, cst.Is)
_MISMATCHES = (cst.NotEqual, cst.IsNot)


@register("fp8_else_takes_e5m2_bound")
def fp8_else_takes_e5m2_bound(ctx: ModuleContext, rule, target) -> Iterable[Hit]:
    """PT224: `if dtype == torch.float8_e4m3fn: <e4m3 bound> else: <e5m2's 57344>` (or the conditional
    expression): every other dtype is taken for e5m2, so float8_e4m3fnuz, gfx942's e4m3, is scaled and clamped
    to 57344 instead of 240. The finding is each else-branch line using the bound; it points at the test."""
    for branch in [*ctx.nodes(cst.If), *ctx.nodes(cst.IfExp)]:
        split = _e4m3fn_split(ctx, branch)
        if split is None or only_on_cuda(ctx, branch):
            continue
        checked, others = split
        function = _enclosing_function(ctx, branch)
        if _tests_other_fp8(ctx, checked, function):
            continue
        names = _e5m2_bound_names(ctx, function)
        test = {"line": ctx.position(branch.test).start.line}
        whole = ctx.position(branch)  # both sides go: the port takes torch.finfo(dtype).max for the pair
        extent = {"line": whole.start.line, "end_line": whole.end.line}
        reported: set[int] = set()
        for use in _e5m2_bound_uses(ctx, others, names):
            line = ctx.position(use).start.line
            if line not in reported:
                reported.add(line)
                yield Hit(use, {"bound": ctx.code_for(use).strip(), "test": test, "split": extent})


def _e4m3fn_split(ctx: ModuleContext, branch: cst.If | cst.IfExp) -> tuple[str, cst.CSTNode] | None:
    """(the checked expression's code, the branch every dtype but e4m3fn takes) when the test is
    `<x> == torch.float8_e4m3fn` / `is` (the else branch) or `!=` / `is not` (the body)."""
    test = branch.test
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return None
    (target,) = test.comparisons
    others: cst.CSTNode | None
    if isinstance(target.operator, _MATCHES):
        others = branch.orelse
    elif isinstance(target.operator, _MISMATCHES):
        others = branch.body
    else:
        return None
    if others is None:
        return None
    sides = (test.left, target.comparator)
    dtype_sides = [_E4M3FN in ctx.qualified_names(side) for side in sides]
    if dtype_sides.count(True) != 1:
        return None
    checked = sides[dtype_sides.index(False)]
    return ctx.code_for(checked).strip(), others


def _tests_other_fp8(ctx: ModuleContext, checked: str, function: cst.FunctionDef | None) -> bool:
    """The checked expression is also compared with, or tested for membership in, e5m2 or an FNUZ dtype in
    the same function (an `elif`, an `assert dtype in (e4m3fn, e5m2)` before the split): the code tells the
    formats apart, and an FNUZ dtype is refused or handled, not taken for e5m2."""
    scope = descendants(function.body) if function is not None else iter(ctx.nodes(cst.Comparison))
    for node in scope:
        if not isinstance(node, cst.Comparison):
            continue
        sides = [node.left, *(c.comparator for c in node.comparisons)]
        if checked not in {ctx.code_for(side).strip() for side in sides}:
            continue
        if any(_names_other_fp8(ctx, side) for side in sides):
            return True
    return False


def _names_other_fp8(ctx: ModuleContext, side: cst.CSTNode) -> bool:
    candidates = [side]
    if isinstance(side, (cst.Tuple, cst.List, cst.Set)):
        candidates = [element.value for element in side.elements]
    return any(ctx.qualified_names(c) & _OTHER_FP8 for c in candidates)


def _is_e5m2_bound(ctx: ModuleContext, node: cst.CSTNode) -> bool:
    """The literal 57344 or `torch.finfo(torch.float8_e5m2).max`."""
    if isinstance(node, (cst.Integer, cst.Float)):
        return literal_value(node) == E5M2_MAX
    if not (isinstance(node, cst.Attribute) and node.attr.value == "max" and isinstance(node.value, cst.Call)):
        return False
    call = node.value
    return _tail(call.func) == "finfo" and bool(call.args) and _E5M2 in ctx.qualified_names(call.args[0].value)


def _e5m2_bound_names(ctx: ModuleContext, function: cst.FunctionDef | None) -> set[str]:
    """Names bound to e5m2's bound (`E5M2_MAX_POS = torch.finfo(torch.float8_e5m2).max`) at module level
    (also under a module-level `if` / `try`, as version-gated constants are) or in the given function."""
    names: set[str] = set()
    for assign in [*ctx.nodes(cst.Assign), *ctx.nodes(cst.AnnAssign)]:
        if assign.value is None or not _is_e5m2_bound(ctx, assign.value):
            continue
        if _enclosing_function(ctx, assign) not in (None, function):
            continue
        targets = [t.target for t in assign.targets] if isinstance(assign, cst.Assign) else [assign.target]
        names |= {t.value for t in targets if isinstance(t, cst.Name)}
    return names


def _e5m2_bound_uses(ctx: ModuleContext, branch: cst.CSTNode, names: set[str]) -> Iterator[cst.CSTNode]:
    """The places in the branch that read e5m2's bound: the literal, the finfo range, or a name bound to it."""
    for node in descendants(branch):
        if _is_e5m2_bound(ctx, node):
            yield node
        elif isinstance(node, cst.Name) and node.value in names and not _is_assign_target(ctx, node):
            yield node


# torch's FNUZ fp8 dtypes: gfx942's formats, not gfx950's (OCP). Triton's (tl.float8e4b8 / e5b16) are
# PT115's, which reports them on gfx950 under any test.
FNUZ_TORCH = {"torch.float8_e4m3fnuz", "torch.float8_e5m2fnuz"}


@register("fnuz_chosen_by_vendor_test")
def fnuz_chosen_by_vendor_test(ctx: ModuleContext, rule, target) -> Iterable[Hit]:
    """PT228: `if torch.version.hip: dtype = torch.float8_e4m3fnuz` (or the else of a CUDA-build test) picks
    gfx942's FNUZ fp8 for every ROCm build, gfx950's OCP fp8 included. The finding is the vendor test, the
    line a port turns into an arch test; the FNUZ dtype chosen under it is named. A test that also asks the
    arch (`is_MI300()`, a capability, `gcnArchName`) or a FNUZ dtype that is only compared is not matched."""
    reported: set[int] = set()
    for reference in [*ctx.nodes(cst.Attribute), *ctx.nodes(cst.Name)]:
        dtype = _fnuz_dtype(ctx, reference)
        if dtype is None or _in_comparison(ctx, reference):
            continue
        branch = _nearest_branch(ctx, reference)
        if branch is None or id(branch.test) in reported or not _rocm_side(ctx, branch, reference):
            continue
        reported.add(id(branch.test))
        chosen = {"line": ctx.position(reference).start.line}  # where the FNUZ dtype is taken: the port edits it too
        dtype, test = ctx.code_for(reference).strip(), ctx.code_for(branch.test).strip()
        yield Hit(branch.test, {"dtype": dtype, "test": test, "chosen": chosen})


def _fnuz_dtype(ctx: ModuleContext, node: cst.CSTNode) -> str | None:
    parent = ctx.parent(node)
    if isinstance(parent, cst.Attribute) and parent.value is node:
        return None  # the inner part of a longer dotted name
    if isinstance(node, cst.Name) and isinstance(parent, cst.Attribute):
        return None
    return next((name for name in ctx.qualified_names(node) if name in FNUZ_TORCH), None)


def _nearest_branch(ctx: ModuleContext, node: cst.CSTNode) -> cst.If | cst.IfExp | None:
    """The innermost if / conditional expression whose body or else holds `node` (not its test)."""
    child = node
    for parent in ctx.ancestors(node):
        if isinstance(parent, (cst.If, cst.IfExp)) and child is not parent.test:
            return parent
        if isinstance(parent, (cst.FunctionDef, cst.ClassDef)):
            return None
        child = parent
    return None


def _rocm_side(ctx: ModuleContext, branch: cst.If | cst.IfExp, node: cst.CSTNode) -> bool:
    """`node` is in the branch a ROCm build takes, chosen by a test that asks only the vendor."""
    platform = _vendor_only(ctx, branch.test)
    if platform is None:
        return False
    in_body = node is branch.body or any(a is branch.body for a in ctx.ancestors(node))
    return in_body == (platform == ROCM)


def _vendor_only(ctx: ModuleContext, test: cst.BaseExpression) -> str | None:
    """The platform a test states when each of its parts is a vendor test or `torch.cuda.is_available()`
    (so `torch.version.hip and is_MI300()` asks the arch too: None)."""
    parts = list(and_operands(test))
    platforms = {platform_of_test(ctx, part) for part in parts if not _asks_availability(ctx, part)}
    if len(platforms) != 1 or None in platforms:
        return None
    return platforms.pop()


def _asks_availability(ctx: ModuleContext, part: cst.BaseExpression) -> bool:
    return isinstance(part, cst.Call) and "torch.cuda.is_available" in ctx.qualified_names(part)


def _in_comparison(ctx: ModuleContext, node: cst.CSTNode) -> bool:
    """`x.dtype in (torch.float8_e4m3fnuz, ...)`: a FNUZ dtype tested for, not chosen."""
    for parent in ctx.ancestors(node):
        if isinstance(parent, cst.Comparison):
            return True
        if isinstance(parent, (cst.BaseStatement, cst.BaseSmallStatement)):
            return False
    return False
