"""Reading and writing the JSON files users keep (profiles), with errors that name them."""

from __future__ import annotations

import json
import os
import re
from itertools import accumulate
from pathlib import Path

from . import infile
from .errors import ProfileError, UsageError
from .outfile import check_new_dir, check_output_target, write_output

# The deepest document innoflush writes (a lab validate report) nests 11 deep.
MAX_JSON_DEPTH = 64

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def read_json(path: str | Path, what: str = "file"):
    """The parsed JSON of a file (infile.read_text: a regular file within the input
    cap); ProfileError naming the file and the problem."""
    return parse_json(infile.read_text(path, what, error=ProfileError), str(path))


def check_depth(text: str, where: str, limit: int = MAX_JSON_DEPTH) -> None:
    """ProfileError when text's arrays and objects nest deeper than limit.

    Counted on the brackets outside strings before parsing: json's parser recurses once
    a level, and a deep enough document ends in a RecursionError (or, in C, the stack).
    """
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    if brackets.count("[") + brackets.count("{") <= limit:
        return
    if max(accumulate(map(_STEP.__getitem__, brackets))) > limit:
        raise ProfileError(f"{where}: JSON nested more than {limit} levels deep, the cap on "
                           "input files")


def parse_json(text: str, where: str):
    check_depth(text, where)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ProfileError(f"{where}: not valid JSON ({exc.msg} at line {exc.lineno})") \
            from None
    except ValueError:   # an integer longer than Python converts (4300 digits)
        raise ProfileError(f"{where}: not valid JSON (a number too long to read)") from None
    except RecursionError:   # the depth check bounds it; kept as the last line of defence
        raise ProfileError(f"{where}: JSON nested too deeply") from None


def check_store(directory: Path, name: str, kind: str, overwrite: bool = False) -> None:
    """Before a run that ends by saving directory/name.json (measure --save, lab calibrate
    --save): the name is free (or overwrite), and the store can be created and written —
    so a long run is not lost to a store it cannot save into. Creates nothing."""
    target = directory / f"{name}.json"
    if os.path.lexists(target) and not overwrite:
        raise UsageError(f"{kind} {name!r} already exists at {target} "
                         "(use --force to replace it)")
    label = f"the {kind} store {directory}"
    check_new_dir(directory, label)
    if directory.is_dir():
        check_output_target(target, f"the {kind} store's")


def store_file(directory: Path, name: str, text: str, kind: str,
               overwrite: bool = False) -> Path:
    """Write directory/name.json atomically (temp file, fsync, rename: innoflush/outfile.py);
    refuses to replace an existing one unless asked, so a typo never loses a saved
    profile."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create {directory}: {exc.strerror}") from None
    target = directory / f"{name}.json"
    exists = None if overwrite else (f"{kind} {name!r} already exists at {target} "
                                     "(use --force to replace it)")
    write_output(target, text, f"the {kind} store's", exists_error=exists)
    return target
