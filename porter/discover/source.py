"""Reading a discovered file: bytes for the cache key, text for the analyzer, or a SkipNote."""

from __future__ import annotations

import io
import os
import re
import stat
import tokenize

from porter.records import SkipNote, SourceFile

BOM = "\ufeff"


def read_bytes(source: SourceFile) -> bytes | SkipNote:
    """The file's bytes; a FIFO, device or socket swapped in since discovery is not waited on."""
    try:
        descriptor = os.open(source.absolute, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as error:
        return SkipNote(source.path, f"unreadable: {error.strerror or error}")
    with os.fdopen(descriptor, "rb") as handle:
        try:
            if not stat.S_ISREG(os.fstat(descriptor).st_mode):
                return SkipNote(source.path, "not a regular file (a FIFO, device or socket is never read)")
            return handle.read()
        except OSError as error:
            return SkipNote(source.path, f"unreadable: {error.strerror or error}")


def decode(path: str, data: bytes) -> str | SkipNote:
    """UTF-8 text without a leading BOM; binary or other encodings are skipped, not guessed."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        return SkipNote(path, f"not UTF-8 (byte {error.start}: {data[error.start : error.start + 1]!r})")
    if "\x00" in text:
        return SkipNote(path, "binary content (NUL bytes)")
    return text[1:] if text.startswith(BOM) else text


def read_source(source: SourceFile) -> str | SkipNote:
    data = read_bytes(source)
    return data if isinstance(data, SkipNote) else decode(source.path, data)


# libcst's native parser overflows its stack (a segfault no try can catch) on long chains of prefix
# operators and nested lambdas, and takes time that grows faster than n^2 with long flat chains of
# binary operators (1,500 terms: 4 s; 5,000: 166 s). No hand-written code comes near these bounds.
MAX_PREFIX_CHAIN = 100
MAX_LAMBDA_CHAIN = 50
MAX_OPERATOR_CHAIN = 800
# each pattern starts with a literal or a small class, so a search costs about 0.1 s per MB
_PREFIX_CHAINS = (
    re.compile(r"[-+~](?:\s*[-+~]){%d}" % (MAX_PREFIX_CHAIN - 1)),
    re.compile(r"not\s+(?:not\s+){%d}" % (MAX_PREFIX_CHAIN - 1)),
    re.compile(r"not\s*[-+~]\s*(?:not\s*[-+~]\s*){%d}" % (MAX_PREFIX_CHAIN // 2 - 1)),
)
_LAMBDA_CHAIN = re.compile(r"lambda[^:\n]*:\s*(?:lambda[^:\n]*:\s*){%d}" % (MAX_LAMBDA_CHAIN - 1))
_OPERATOR_CHAIN = re.compile(
    r"[\w.)\]]\s*[-+*/%%&|^@<>]{1,2}\s*(?:[\w.)\]'\"]+\s*[-+*/%%&|^@<>]{1,2}\s*){%d}" % (MAX_OPERATOR_CHAIN - 1)
)


def _longest_prefix_run(text: str) -> int:
    """The longest run of prefix-operator tokens (comments and strings of dashes do not count)."""
    longest = run = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.string in ("-", "+", "~", "not") and token.type in (tokenize.OP, tokenize.NAME):
                run += 1
                longest = max(longest, run)
            elif token.type not in (tokenize.NL, tokenize.COMMENT):
                run = 0
    except (tokenize.TokenError, SyntaxError):
        pass  # the parser reports what the tokenizer could not read
    return longest


def parse_hazard(text: str) -> str | None:
    """Why parsing `text` could crash or hang the parser, or None (a linear scan of the text)."""
    if any(chain.search(text) for chain in _PREFIX_CHAINS) and _longest_prefix_run(text) >= MAX_PREFIX_CHAIN:
        return f"a chain of {MAX_PREFIX_CHAIN}+ prefix operators (not, -, +, ~): too deep to parse safely"
    if text.count("lambda") >= MAX_LAMBDA_CHAIN and _LAMBDA_CHAIN.search(text):
        return f"{MAX_LAMBDA_CHAIN}+ nested lambdas: too deep to parse safely"
    if len(text) >= 2 * MAX_OPERATOR_CHAIN and _OPERATOR_CHAIN.search(text):
        return f"an expression of {MAX_OPERATOR_CHAIN}+ chained operators: too long to parse in bounded time"
    return None
