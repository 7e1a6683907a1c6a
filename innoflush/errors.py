"""Errors a user can cause or meet, each mapped to one clear line and an exit code."""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class InnoflushError(Exception):
    """A failure to report as one line on stderr, never as a traceback."""

    exit_code = EXIT_FAILURE


class UsageError(InnoflushError):
    """Bad input from the user: a wrong path, value, name or file."""

    exit_code = EXIT_USAGE


class ProfileError(UsageError):
    """A device or workload profile that is missing, unknown or invalid."""
