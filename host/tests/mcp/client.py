"""Drives `toolhost mcp` over stdio with the official MCP Python SDK.

Run by host/tests/suite/mcp.rs, which sets up the workspace and checks what
this prints: one JSON object describing everything the client saw. This
script only observes; the Rust test holds the expectations, so a failure
names what differed.

usage: client.py ERA TOOLHOST [ARG...]
       client.py http ERA URL
       client.py typed ERA TOOLHOST [ARG...]
       client.py calls ERA TOOLHOST [ARG...]
  ERA       `legacy` (the initialize handshake) or `modern` (server/discover,
            protocol 2026-07-28)
  TOOLHOST  the toolhost binary; ARG... its arguments (global flags, `mcp`)
  URL       a `toolhost mcp --http` endpoint; a shorter round of calls,
            with the bearer token in $TOOLHOST_MCP_TOKEN
  typed     calls of the typed-exports fixture: output schemas and
            structured content (which the SDK validates against them)
  calls     the calls in $MCP_CALLS (a JSON list of [tool, arguments]),
            each result in order, with the tools' annotations
  elicit    the same calls, from a client that declares elicitation and
            answers each question with the next of $MCP_ANSWERS (`once`,
            `session` or `deny` chosen, or `decline`); what was asked too
"""

import json
import os
import shutil
import sys
import time

import anyio
import httpx2
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import listen
from mcp.shared.subscriptions import ToolsListChanged
from mcp.shared.exceptions import MCPError


def result_of(result):
    texts = [block.text for block in result.content if block.type == "text"]
    return {"blocks": len(result.content), "text": "".join(texts), "is_error": bool(result.is_error)}


def error_of(error):
    return {"code": error.code, "message": error.error.message}


def children():
    """Child processes of this one (Linux /proc)."""
    pids = []
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/children") as f:
                pids += [int(p) for p in f.read().split()]
        except OSError:
            pass
    return pids


def server_pid():
    for pid in children():
        try:
            with open(f"/proc/{pid}/comm") as f:
                if f.read().strip() == "toolhost":
                    return pid
        except OSError:
            pass
    return None


def cpu_ticks(pid):
    """User plus system CPU time of `pid`, in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def ticks_over(pid, seconds):
    before = cpu_ticks(pid)
    time.sleep(seconds)
    return cpu_ticks(pid) - before


list_changed = anyio.Event()


async def on_message(message):
    if isinstance(message, types.ToolListChangedNotification):
        list_changed.set()


async def drive(era, session):
    seen = {}
    if era == "modern":
        info = await session.discover()
        seen["supported_versions"] = list(info.supported_versions)
    else:
        await session.initialize()
    seen["protocol_version"] = session.protocol_version
    seen["server_name"] = session.server_info.name if session.server_info else None
    seen["instructions"] = session.instructions

    listed = await session.list_tools()
    seen["tools"] = [
        {
            "name": tool.name,
            "title": tool.title,
            "description": tool.description,
            "input_schema": tool.input_schema,
            "annotations": tool.annotations.model_dump(by_alias=True, exclude_none=True)
            if tool.annotations
            else None,
        }
        for tool in listed.tools
    ]

    seen["good"] = result_of(await session.call_tool("read_file", {"path": "notes.txt"}))
    seen["denied"] = result_of(await session.call_tool("read_file", {"path": "/etc/passwd"}))
    seen["schema"] = result_of(await session.call_tool("read_file", {"path": 5}))
    try:
        await session.call_tool("no_such_tool", {})
        seen["unknown"] = "answered"
    except MCPError as e:
        seen["unknown"] = error_of(e)

    started = time.monotonic()
    seen["spin"] = result_of(await session.call_tool("spin", {}))
    seen["spin"]["seconds"] = time.monotonic() - started

    # Hot reload: the Rust test asked for echo to be dropped into the
    # plugins directory now (MCP_DROP_FROM -> MCP_DROP_TO).
    # A client that initialized is told by a notification; a 2026-07-28
    # client, which has no initialize, listens for it (subscriptions/listen).
    async def drop_in_and_wait():
        shutil.copyfile(os.environ["MCP_DROP_FROM"], os.environ["MCP_DROP_TO"] + ".part")
        os.rename(os.environ["MCP_DROP_TO"] + ".part", os.environ["MCP_DROP_TO"])
        started = time.monotonic()
        names = []
        while "echo" not in names and time.monotonic() - started < 15:
            with anyio.move_on_after(0.2):
                await list_changed.wait()
            names = [tool.name for tool in (await session.list_tools()).tools]
        return names

    if era == "legacy":
        names = await drop_in_and_wait()
    else:
        async with listen(session, tools_list_changed=True) as subscription:
            seen["listen_honored"] = subscription.honored.model_dump(by_alias=True, exclude_none=True)

            async def watch():
                async for event in subscription:
                    if isinstance(event, ToolsListChanged):
                        list_changed.set()
                        return

            async with anyio.create_task_group() as group:
                group.start_soon(watch)
                names = await drop_in_and_wait()
                group.cancel_scope.cancel()
    seen["reload"] = {"listed": "echo" in names, "told": list_changed.is_set()}

    updates = []

    async def on_progress(progress, total, message):
        updates.append({"progress": progress, "message": message})

    seen["echo"] = result_of(await session.call_tool("echo", {"text": "hi"}, progress_callback=on_progress))
    seen["echo_progress"] = list(updates)
    updates.clear()
    started = time.monotonic()
    seen["chatter"] = result_of(
        await session.call_tool("chatter", {"count": 100000}, progress_callback=on_progress)
    )
    seen["chatter"]["seconds"] = time.monotonic() - started
    seen["chatter_progress"] = list(updates)

    # A guest that never returns: wait until it reports, cancel, then check
    # the server process spends no more CPU on it.
    updates.clear()
    pid = server_pid()
    cancel = {"server_pid_found": pid is not None}
    running = anyio.Event()

    async def on_first(progress, total, message):
        running.set()

    async def cancelled_call():
        with anyio.CancelScope() as scope:
            cancel_scope.append(scope)
            await session.call_tool("chatter", {"count": 0}, progress_callback=on_first)
            cancel["answered"] = True

    cancel_scope = []
    async with anyio.create_task_group() as group:
        group.start_soon(cancelled_call)
        with anyio.fail_after(10):
            await running.wait()
        if pid is not None:
            cancel["ticks_running"] = await anyio.to_thread.run_sync(ticks_over, pid, 0.5)
        cancel_scope[0].cancel()
    cancel["cancelled_at"] = time.time()
    await anyio.sleep(0.3)
    if pid is not None:
        cancel["ticks_after"] = await anyio.to_thread.run_sync(ticks_over, pid, 0.5)
    seen["cancel"] = cancel

    seen["after"] = result_of(await session.call_tool("echo", {"text": "still here"}))
    return seen


async def open_session(era, session):
    seen = {}
    if era == "modern":
        await session.discover()
    else:
        await session.initialize()
    seen["protocol_version"] = session.protocol_version
    return seen


async def drive_http(era, session):
    seen = await open_session(era, session)
    listed = await session.list_tools()
    seen["tools"] = {
        tool.name: tool.annotations.model_dump(by_alias=True, exclude_none=True) for tool in listed.tools
    }
    seen["good"] = result_of(await session.call_tool("read_file", {"path": "notes.txt"}))
    seen["denied"] = result_of(await session.call_tool("read_file", {"path": "/etc/passwd"}))
    try:
        await session.call_tool("no_such_tool", {})
        seen["unknown"] = "answered"
    except MCPError as e:
        seen["unknown"] = error_of(e)
    updates = []

    async def on_progress(progress, total, message):
        updates.append({"progress": progress, "message": message})

    seen["echo"] = result_of(await session.call_tool("echo", {"text": "hi"}, progress_callback=on_progress))
    seen["echo_progress"] = updates
    return seen


async def drive_typed(era, session):
    seen = await open_session(era, session)
    listed = await session.list_tools()
    seen["output_schemas"] = {tool.name: tool.output_schema for tool in listed.tools}

    def structured(result):
        return {**result_of(result), "structured": result.structured_content}

    seen["add"] = structured(await session.call_tool("add", {"a": 18446744073709551614, "b": 1}))
    seen["read"] = structured(await session.call_tool("typed_read_file", {"path": "notes.txt"}))
    seen["record"] = structured(await session.call_tool("echo_record", {"p": {"x": 1, "y": 2}}))
    seen["nothing"] = structured(await session.call_tool("nothing", {}))
    seen["fail"] = structured(await session.call_tool("fail", {"message": "no"}))
    seen["schema"] = structured(await session.call_tool("add", {"a": -1, "b": 0}))
    return seen


async def main():
    if sys.argv[1] == "typed":
        era, command, args = sys.argv[2], sys.argv[3], sys.argv[4:]
        params = StdioServerParameters(command=command, args=args, env=dict(os.environ))
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                seen = await drive_typed(era, session)
        print(json.dumps(seen))
        return
    if sys.argv[1] == "calls":
        era, command, args = sys.argv[2], sys.argv[3], sys.argv[4:]
        params = StdioServerParameters(command=command, args=args, env=dict(os.environ))
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                seen = await open_session(era, session)
                listed = await session.list_tools()
                seen["annotations"] = {
                    tool.name: tool.annotations.model_dump(by_alias=True, exclude_none=True) if tool.annotations else None
                    for tool in listed.tools
                }
                seen["results"] = [
                    result_of(await session.call_tool(tool, arguments))
                    for tool, arguments in json.loads(os.environ["MCP_CALLS"])
                ]
        print(json.dumps(seen))
        return
    if sys.argv[1] == "elicit":
        era, command, args = sys.argv[2], sys.argv[3], sys.argv[4:]
        answers = json.loads(os.environ["MCP_ANSWERS"])
        asked = []

        async def answer(context, params):
            asked.append({"message": params.message, "schema": params.requested_schema})
            given = answers.pop(0)
            if given == "decline":
                return types.ElicitResult(action="decline")
            return types.ElicitResult(action="accept", content={"answer": given})

        params = StdioServerParameters(command=command, args=args, env=dict(os.environ))
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, elicitation_callback=answer) as session:
                seen = await open_session(era, session)
                seen["results"] = [
                    result_of(await session.call_tool(tool, arguments))
                    for tool, arguments in json.loads(os.environ["MCP_CALLS"])
                ]
        seen["asked"] = asked
        print(json.dumps(seen))
        return
    if sys.argv[1] == "http":
        era, url = sys.argv[2], sys.argv[3]
        headers = {"Authorization": f"Bearer {os.environ['TOOLHOST_MCP_TOKEN']}"}
        # The SDK's own HTTP library and timeouts (a response stream may
        # stay open a while).
        timeout = httpx2.Timeout(30, read=300)
        async with httpx2.AsyncClient(headers=headers, timeout=timeout) as http:
            async with streamable_http_client(url, http_client=http) as (read, write):
                async with ClientSession(read, write) as session:
                    seen = await drive_http(era, session)
        print(json.dumps(seen))
        return
    era, command, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    params = StdioServerParameters(command=command, args=args, env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, message_handler=on_message) as session:
            seen = await drive(era, session)
    print(json.dumps(seen))


if __name__ == "__main__":
    anyio.run(main)
