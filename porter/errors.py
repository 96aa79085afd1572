"""Errors that end a command with exit code 2 and a clear one-line message, never a traceback."""


class PorterError(Exception):
    """Base for every error porter reports to the user as a message."""

    exit_code = 2


class UsageError(PorterError):
    """Bad input from the user: an unknown target, a malformed config or rule, a missing path."""


class ConfigError(UsageError):
    """A malformed [tool.porter] table or rule file; the message names the file and field."""
