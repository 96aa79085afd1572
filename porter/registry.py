"""Named plug-ins (rule visitors, codemods) registered by decorators in the modules of a package,
which are imported on first lookup so that adding one is adding a module."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from typing import Generic, TypeVar

Fn = TypeVar("Fn", bound=Callable)


def _qualname(fn: Callable) -> str:
    return f"{fn.__module__}.{fn.__qualname__}"


class Registry(Generic[Fn]):
    def __init__(self, kind: str, packages: tuple[str, ...], skip_private: bool = False):
        self.kind = kind
        self.packages = packages
        self.skip_private = skip_private  # modules named _x hold shared helpers, not plug-ins
        self._entries: dict[str, Fn] = {}
        self._loaded = False

    def add(self, name: str, fn: Fn) -> None:
        existing = self._entries.get(name)
        if existing is not None and existing is not fn and _qualname(existing) != _qualname(fn):
            raise ValueError(f"{self.kind} {name!r} registered twice ({_qualname(existing)}, {_qualname(fn)})")
        self._entries[name] = fn

    def load(self) -> None:
        """Import every module of the packages (once) so their decorators run."""
        if self._loaded:
            return
        self._loaded = True
        for package_name in self.packages:
            package = importlib.import_module(package_name)  # porter's own packages: a failure is a bug
            for info in pkgutil.walk_packages(getattr(package, "__path__", []), package_name + "."):
                if not (self.skip_private and info.name.rsplit(".", 1)[-1].startswith("_")):
                    importlib.import_module(info.name)

    def get(self, name: str) -> Fn | None:
        self.load()
        return self._entries.get(name)

    def names(self) -> list[str]:
        self.load()
        return sorted(self._entries)
