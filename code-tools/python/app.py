"""python: run the Python code the model writes, in a fresh interpreter per call.

A toolhost plugin (world `plugin` of wit/plugin.wit), built by
`toolhost plugin install python` with componentize-py. Every module in
CURATED is imported here, at build time: componentize-py snapshots the
interpreter after this module loads, so only what is imported now exists
at run time. The code reaches files only through the directories the user
granted this tool (its preopens); it has no network, no subprocess and no
environment variables.
"""

# The curated standard library. A module missing here is missing in the
# sandbox; the test that installs this tool imports every one of them.
import base64
import bisect
import calendar
import collections
import collections.abc
import copy
import csv
import dataclasses
import datetime
import decimal
import difflib
import encodings.idna
import encodings.utf_16
import encodings.utf_32
import encodings.latin_1
import encodings.ascii
import enum
import fnmatch
import fractions
import functools
import glob
import hashlib
import heapq
import html
import io
import itertools
import json
import linecache
import math
import operator
import os
import pathlib
import pprint
import random
import re
import shutil
import sqlite3
import statistics
import string
import struct
import sys
import textwrap
import time
import traceback
import typing
import unicodedata
import uuid
import zlib
import zoneinfo
import zoneinfo._common

import wit_world
from componentize_py_types import Err
from wit_world.imports.tool_types import CallError_Failed, CallError_InvalidInput, ToolSpec

def _bundle_time_zones():
    """zoneinfo reads the IANA database from files (the `tzdata` package
    here), but files on the build machine are gone at run time: read every
    zone now, into the snapshot, and let zoneinfo load them from memory."""
    import importlib.resources

    zones = {}

    def walk(node, prefix):
        for child in node.iterdir():
            if child.is_dir():
                walk(child, prefix + child.name + "/")
            elif child.name[:1].isupper() or prefix:
                data = child.read_bytes()
                if data[:4] == b"TZif":
                    zones[prefix + child.name] = data

    try:
        walk(importlib.resources.files("tzdata").joinpath("zoneinfo"), "")
    except ModuleNotFoundError:
        return
    zoneinfo.reset_tzpath([])

    def load_tzdata(key):
        try:
            return io.BytesIO(zones[key])
        except KeyError:
            raise zoneinfo.ZoneInfoNotFoundError(f"No time zone found with key {key}") from None

    zoneinfo._common.load_tzdata = load_tzdata
    zoneinfo.available_timezones = lambda: set(zones)


_bundle_time_zones()

CURATED = [
    "base64", "bisect", "calendar", "collections", "copy", "csv", "dataclasses",
    "datetime", "decimal", "difflib", "enum", "fnmatch", "fractions", "functools",
    "glob", "hashlib", "heapq", "html", "io", "itertools", "json", "math",
    "operator", "os", "pathlib", "pprint", "random", "re", "shutil", "sqlite3",
    "statistics", "string", "struct", "textwrap", "time", "typing", "unicodedata",
    "uuid", "zlib", "zoneinfo",
]

DESCRIPTION = (
    "Run Python 3 code in a sandbox and return what it prints. Use it to compute, parse and "
    "transform data (CSV, JSON, text), check a regular expression or try an algorithm. "
    "The result is the code's stdout, then `--- stderr ---` and its stderr when there is any; "
    "an uncaught exception fails the call with its traceback. Each call starts a fresh "
    "interpreter: no variable, import or state carries over, so keep state in files in a "
    "directory this tool may write. Files: open() reaches only the directories listed for this "
    "tool, paths relative to the workspace. Only the standard library, and of it only: "
    + ", ".join(CURATED)
    + ". No third-party packages (numpy, pandas), no network, no subprocess, no environment "
    "variables. Code runs about 5 times slower than native CPython (several times more on its "
    "first calls after install, while it is compiled) and each call has a compute, time and "
    "memory budget: keep loops to millions, not billions, of steps."
)

SCHEMA = {
    "type": "object",
    "properties": {
        "code": {
            "type": "string",
            "description": "A Python 3 program; print() what you want to read.",
        },
    },
    "required": ["code"],
    "additionalProperties": False,
}

# The most output a call keeps before it stops the code: 16 times the
# tool's default output limit (256 KiB), so a print loop ends here and the
# host reports its own limit. Kept small because handing the host a big
# result costs the guest's own fuel; an output limit raised past it gets
# the first 4 MiB and the line saying the code was stopped.
MAX_OUTPUT = 4 << 20


class OutputFlood(BaseException):
    """Stops code that printed more than MAX_OUTPUT (not an Exception, so
    the code's own `except Exception` does not swallow it)."""


class Capture(io.TextIOBase):
    """One of stdout and stderr, counted against a budget both share."""

    def __init__(self, budget):
        self.parts = []
        self.budget = budget

    def writable(self):
        return True

    def write(self, text):
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self.budget[0] += len(text)
        if self.budget[0] > MAX_OUTPUT:
            raise OutputFlood()
        self.parts.append(text)
        return len(text)

    def text(self):
        return "".join(self.parts)


class WitWorld(wit_world.WitWorld):
    def list_tools(self) -> list[ToolSpec]:
        return [
            ToolSpec(
                name="python",
                description=DESCRIPTION,
                input_schema=json.dumps(SCHEMA),
                read_only=False,
            )
        ]

    def call_tool(self, name: str, input: str) -> str:
        if name != "python":
            raise Err(CallError_InvalidInput(f"no tool `{name}`"))
        code = json.loads(input)["code"]
        # Tracebacks quote the code's own lines.
        linecache.cache["<code>"] = (len(code), None, code.splitlines(True), "<code>")
        budget = [0]
        out, err = Capture(budget), Capture(budget)
        saved = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = out, err
        failure = None
        try:
            exec(compile(code, "<code>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
        except SystemExit as e:
            if e.code not in (None, 0):
                failure = f"SystemExit: {e.code}"
        except OutputFlood:
            failure = None
            err.parts.append(f"\n--- stopped: the code printed more than {MAX_OUTPUT >> 20} MiB ---\n")
        except BaseException as e:
            # From the code's own frames: the first is this function's.
            frames = e.__traceback__.tb_next if e.__traceback__ else None
            failure = "".join(traceback.format_exception(type(e), e, frames))
        finally:
            sys.stdout, sys.stderr = saved
        text = result(out.text(), err.text())
        if failure is not None:
            raise Err(CallError_Failed(join(text, failure)))
        return text


def result(stdout, stderr):
    """stdout, then `--- stderr ---` and stderr when there is any."""
    if not stderr:
        return stdout
    return join(stdout, "--- stderr ---\n" + stderr)


def join(first, second):
    if not first:
        return second
    return first + ("" if first.endswith("\n") else "\n") + second
