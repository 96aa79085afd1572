"""File discovery: which files a scan reads, and notes on those it had to pass over."""

from porter.discover.ignore import DEFAULT_EXCLUDED_DIRS
from porter.discover.kinds import KIND_GLOBS, kind_of
from porter.discover.source import decode, read_bytes, read_source
from porter.discover.walk import DiscoverOptions, Discovery, discover, discover_paths, kinds_for

__all__ = [
    "DEFAULT_EXCLUDED_DIRS",
    "KIND_GLOBS",
    "DiscoverOptions",
    "Discovery",
    "decode",
    "discover",
    "discover_paths",
    "kind_of",
    "kinds_for",
    "read_bytes",
    "read_source",
]
