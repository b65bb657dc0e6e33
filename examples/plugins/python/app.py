"""csv_summary: the columns of a CSV file with their types and ranges.

A toolhost plugin for world `plugin` (wit/plugin.wit), built with
componentize-py. It reads files with the standard library: the directories
the user granted this tool are its preopens, so `open()` reaches them and
nothing else.
"""

import csv
import json
import traceback

import wit_world
from componentize_py_types import Err
from wit_world.imports.tool_types import CallError_Failed, CallError_InvalidInput, ToolSpec

SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "The CSV file.", "x-toolhost-path": "read"},
        "delimiter": {"type": "string", "minLength": 1, "maxLength": 1, "default": ","},
    },
    "required": ["path"],
    "additionalProperties": False,
}


class Failed(Exception):
    """Raised to return `failed(message)` to the model."""


class WitWorld(wit_world.WitWorld):
    def list_tools(self) -> list[ToolSpec]:
        return [
            ToolSpec(
                name="csv_summary",
                description=(
                    "Summarize a CSV file: row count and, per column, how many values are "
                    "empty, whether it is numeric (with min, max and mean) or text (with the "
                    "number of distinct values and the most common one)."
                ),
                input_schema=json.dumps(SCHEMA),
                read_only=True,
            )
        ]

    def call_tool(self, name: str, input: str) -> str:
        # componentize-py turns an `Err` into the `call-error` result and
        # any other exception into a trap (a crash, with the traceback on
        # stderr). Turn every exception into `failed` with its message, so
        # the model reads what went wrong; the traceback stays in stderr,
        # which the user's transcript keeps.
        if name != "csv_summary":
            raise Err(CallError_InvalidInput(f"no tool `{name}`"))
        args = json.loads(input)
        try:
            return summarize(args["path"], args.get("delimiter", ","))
        except Failed as e:
            raise Err(CallError_Failed(str(e)))
        except OSError as e:
            raise Err(CallError_Failed(f"cannot read `{args['path']}`: {e.strerror or e}"))
        except Exception as e:
            traceback.print_exc()
            raise Err(CallError_Failed(f"{type(e).__name__}: {e}"))


def summarize(path: str, delimiter: str) -> str:
    with open(path, newline="", encoding="utf-8", errors="replace") as f:
        rows = list(csv.reader(f, delimiter=delimiter))
    if not rows:
        raise Failed(f"`{path}` is empty")
    header, body = rows[0], rows[1:]
    lines = [f"{path}: {len(body)} rows, {len(header)} columns"]
    for i, column in enumerate(header):
        values = [row[i] for row in body if i < len(row)]
        filled = [v for v in values if v.strip() != ""]
        empty = len(body) - len(filled)
        numbers = [n for n in map(number, filled) if n is not None]
        if filled and len(numbers) == len(filled):
            mean = sum(numbers) / len(numbers)
            lines.append(
                f"- {column}: numeric, min {fmt(min(numbers))}, max {fmt(max(numbers))}, "
                f"mean {fmt(mean)}, {empty} empty"
            )
        else:
            distinct = {}
            for v in filled:
                distinct[v] = distinct.get(v, 0) + 1
            common = max(distinct.items(), key=lambda kv: kv[1]) if distinct else None
            most = f", most common {common[0]!r} ({common[1]}x)" if common else ""
            lines.append(f"- {column}: text, {len(distinct)} distinct{most}, {empty} empty")
    return "\n".join(lines) + "\n"


def number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def fmt(x: float) -> str:
    return str(int(x)) if x == int(x) else f"{x:.4g}"
