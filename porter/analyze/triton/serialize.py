"""JSON-able dict of a TritonInventory for `porter scan --kernels` (shape in /work/team/H2_STATUS.md)."""

from __future__ import annotations

from typing import Any

from porter.analyze.triton.estimates import estimate_config, estimate_launch


def inventory_dict(inv, target=None) -> dict[str, Any]:
    kernels = [_kernel(inv, k, target) for k in inv.kernels]
    return {
        "path": inv.path,
        "target": getattr(target, "name", None),
        "kernels": kernels,
        "autotunes": [k["autotune"] for k in kernels if k["autotune"] is not None],
        "launches": [_launch(inv, launch, target) for launch in inv.launches],
        "other_configs": [_config(inv, c, None, target) for c in inv.orphan_configs],
    }


def _vals(inv, values, nodes) -> dict[str, Any]:
    return {key: inv.val_dict(val, nodes.get(key)) for key, val in values.items()}


def _kernel(inv, kernel, target) -> dict[str, Any]:
    return {
        "name": kernel.name,
        **kernel.span.to_dict(),
        "decorators": kernel.decorators,
        "params": [
            {
                "name": p.name,
                "constexpr": p.constexpr,
                "annotation": p.annotation,
                "default": inv.val_dict(p.default, p.node.default),
            }
            for p in kernel.params
        ],
        "gemm_like": kernel.gemm_like,
        "dot_count": len(kernel.dot_nodes),
        "dtypes": kernel.dtypes,
        "elem_bytes": kernel.elem_bytes,
        "elem_bytes_source": kernel.elem_bytes_source,
        "autotune": _autotune(inv, kernel, target) if kernel.autotune else None,
        "heuristics": _vals(inv, kernel.heuristics, kernel.heuristics_nodes) or None,
    }


def _autotune(inv, kernel, target) -> dict[str, Any]:
    tune = kernel.autotune
    return {
        "kernel": tune.kernel,
        **tune.span.to_dict(),
        "key": tune.key,
        "configs_source": tune.configs_source,
        "complete": tune.complete,
        "configs": [_config(inv, c, kernel, target) for c in tune.configs],
    }


def _config(inv, config, kernel, target) -> dict[str, Any]:
    return {
        # where the entry is written: the triton.Config(...) call, or the helper call that builds it
        "index": config.index,
        **config.entry_span.to_dict(),
        "call": config.span.to_dict(),
        "meta": _vals(inv, config.meta, config.meta_nodes),
        "options": _vals(inv, {k: v for k, v in config.options.items() if k != "pre_hook"}, config.option_nodes),
        "amd_knobs": config.amd_knobs,
        "bindings": {k: _plain(v) for k, v in config.bindings.items()},
        "guard": config.guard,
        "meta_complete": config.meta_complete,
        "estimate": estimate_config(config, kernel, target).to_dict() if target is not None else None,
    }


def _launch(inv, launch, target) -> dict[str, Any]:
    kernel = inv.kernel(launch.kernel) if launch.kernel_known else None
    return {
        "kernel": launch.kernel,
        "kernel_known": launch.kernel_known,
        **launch.span.to_dict(),
        "grid": launch.grid,
        "guard": launch.guard,
        "options": _vals(inv, launch.options, launch.option_nodes),
        "meta": _vals(inv, launch.meta, launch.meta_nodes),
        "estimate": estimate_launch(launch, kernel, target).to_dict() if target is not None else None,
    }


def _plain(value):
    return value if value is None or isinstance(value, (bool, int, float, str)) else repr(value)
