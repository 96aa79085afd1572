"""porter verify: replay tests on the CPU, cross-compile kernels for the target, judge patches.

Entry points: `verify_patches(repo, patches, target, options) -> list[Verdict]` and
`verify_tree(repo, target, options) -> Verdict`. Imports are lazy so that the pytest plugin
(`porter.verify.replay_plugin`) loads without the verifier's machinery.
"""

from __future__ import annotations

from typing import Any

__all__ = ["VerifyOptions", "verify_patches", "verify_tree"]


def __getattr__(name: str) -> Any:
    if name == "VerifyOptions":
        from porter.verify.options import VerifyOptions

        return VerifyOptions
    if name in ("verify_patches", "verify_tree"):
        from porter.verify import core

        return getattr(core, name)
    raise AttributeError(name)
