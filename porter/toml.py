"""TOML reading on every supported Python: the standard library's tomllib from 3.11, tomli before."""

from __future__ import annotations

import sys

if sys.version_info >= (3, 11):
    import tomllib as _toml
else:  # tomli is tomllib's origin and has the same API; pyproject requires it on 3.10
    import tomli as _toml

loads = _toml.loads
TOMLDecodeError = _toml.TOMLDecodeError
