"""{{name}}: a toolhost plugin (world `plugin` of wit/plugin.wit), built
with componentize-py.

Files are read with the standard library: the directories the user granted
this tool are its preopens, so `open()` reaches them and nothing else.
"""

import json
import traceback

import wit_world
from componentize_py_types import Err
from wit_world.imports.tool_types import CallError_Failed, CallError_InvalidInput, ToolSpec

SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "The file to count.", "x-toolhost-path": "read"},
    },
    "required": ["path"],
    "additionalProperties": False,
}


class WitWorld(wit_world.WitWorld):
    def list_tools(self) -> list[ToolSpec]:
        return [
            ToolSpec(
                name="{{name}}",
                description="Count the lines, words and bytes of a text file.",
                input_schema=json.dumps(SCHEMA),
                read_only=True,
            )
        ]

    def call_tool(self, name: str, input: str) -> str:
        # `raise Err(CallError_Failed(...))` is the tool's own failure, which
        # the model reads. Any other exception would trap (a crash that hides
        # its message), so every one is turned into `failed` here; the
        # traceback goes to stderr, which the user's transcript keeps.
        if name != "{{name}}":
            raise Err(CallError_InvalidInput(f"no tool `{name}`"))
        args = json.loads(input)
        try:
            return count(args["path"])
        except OSError as e:
            raise Err(CallError_Failed(f"cannot read `{args['path']}`: {e.strerror or e}"))
        except Exception as e:
            traceback.print_exc()
            raise Err(CallError_Failed(f"{type(e).__name__}: {e}"))


def count(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    return f"{len(text.splitlines())} lines, {len(text.split())} words, {len(text.encode())} bytes in {path}"
