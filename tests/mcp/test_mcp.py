"""MCP conformance of `quire mcp` (stdio) and `quire serve` (/mcp over
streamable HTTP), driven by the official Python SDK (`pip install mcp`).

Run: python3 tests/mcp/test_mcp.py   (QUIRE_BIN picks the binary; default target/debug/quire)
"""

import asyncio
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

BIN = os.path.abspath(os.environ.get("QUIRE_BIN", "target/debug/quire"))
TOKEN = "mcp-test-token-0123456789abcdef"


async def exercise(session: ClientSession, label: str) -> None:
    await session.initialize()
    tools = (await session.list_tools()).tools
    by_name = {t.name: t for t in tools}
    assert len(tools) == 68, f"{label}: {len(tools)} tools"
    get_page, delete_page = by_name["getPage"], by_name["deletePage"]
    assert get_page.annotations.read_only_hint is True
    assert get_page.annotations.destructive_hint is False
    assert delete_page.annotations.destructive_hint is True
    assert delete_page.annotations.read_only_hint is False
    assert by_name["updatePage"].annotations.idempotent_hint is True
    external = {"browseImages", "importImage", "searchWeb", "fetchContent", "httpGet", "httpPost"}
    assert all(t.annotations.open_world_hint is (t.name in external) for t in tools)
    assert get_page.title == "Get page"
    assert "confirmationId" in delete_page.input_schema["properties"]

    result = await session.call_tool("getPage", {"slug": "home"})
    assert not result.is_error, result
    assert result.structured_content["items"][0]["slug"] == "home"

    slug = f"from-mcp-{label}"
    result = await session.call_tool("createPage", {"name": "From MCP", "slug": slug})
    assert not result.is_error, result
    page_id = result.structured_content["item"]["id"]

    failing = await session.call_tool("createPage", {"name": "No slug"})
    assert failing.is_error
    assert failing.structured_content["errorCode"] == "VALIDATION"
    assert "slug: required" in failing.content[0].text

    preview = await session.call_tool("deletePage", {"ids": [page_id]})
    assert not preview.is_error, preview
    assert preview.structured_content["requiresConfirmation"] is True
    assert preview.structured_content["confirmationId"].startswith("cf_")

    refused = await session.call_tool(
        "deletePage", {"ids": [page_id], "confirmationId": preview.structured_content["confirmationId"]}
    )
    assert refused.is_error and refused.structured_content["errorCode"] == "APPROVAL_REQUIRED"
    prompts = (await session.list_prompts()).prompts
    assert {p.name for p in prompts} == {"create-landing-page", "write-and-publish-post", "replace-image-on-page"}
    prompt = await session.get_prompt("create-landing-page", {"topic": "Spring Sale"})
    assert "createSection" in prompt.messages[0].content.text

    resources = (await session.list_resources()).resources
    uris = {str(r.uri) for r in resources}
    assert "quire://pages/home" in uris and "quire://posts/hello-quire" in uris, uris
    assert not any(u.endswith("roadmap-draft") for u in uris), "drafts are not resources"
    home = await session.read_resource("quire://pages/home")
    assert '"slug": "home"' in home.contents[0].text

    # the demo vault's notes, through the same registry
    found = await session.call_tool("searchNotes", {"query": "pricing copy"})
    assert not found.is_error, found
    assert found.structured_content["items"][0]["path"] == "meetings/2026-11-02 kickoff.md"
    escaped = await session.call_tool("readNote", {"path": "../quire.db", "startLine": 1})
    assert escaped.is_error and escaped.structured_content["errorCode"] == "VALIDATION"
    print(f"{label}: ok ({len(tools)} tools, {len(prompts)} prompts, {len(resources)} resources)")


async def over_stdio(data: str) -> None:
    params = StdioServerParameters(command=BIN, args=["mcp", "--data", data], env={"QUIRE_LOG": "warn"})
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await exercise(session, "stdio")


async def modes_over_stdio(data: str) -> None:
    for mode, expected in (("readonly", 24), ("pages,posts", 11), ("vault", 13)):
        params = StdioServerParameters(command=BIN, args=["mcp", "--data", data, "--tools", mode], env={"QUIRE_LOG": "warn"})
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = (await session.list_tools()).tools
                assert len(tools) == expected, f"{mode}: {[t.name for t in tools]}"
                if mode == "readonly":
                    assert all(t.annotations.read_only_hint for t in tools)

    seen = []

    async def on_message(message):
        seen.append(type(message).__name__ + " " + repr(message)[:200])

    params = StdioServerParameters(command=BIN, args=["mcp", "--data", data, "--tools", "discover"], env={"QUIRE_LOG": "warn"})
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, message_handler=on_message) as session:
            await session.initialize()
            names = [t.name for t in (await session.list_tools()).tools]
            assert names == ["searchTools", "useTool"], names
            found = await session.call_tool("searchTools", {"query": "create a page", "limit": 3})
            assert not found.is_error
            for _ in range(50):
                if any("ToolListChanged" in m or "tools/list_changed" in m for m in seen):
                    break
                await asyncio.sleep(0.05)
            assert any("ToolListChanged" in m or "tools/list_changed" in m for m in seen), seen
            names = [t.name for t in (await session.list_tools()).tools]
            assert "createPage" in names, names
            used = await session.call_tool("useTool", {"name": "getPage", "arguments": {"slug": "home"}})
            assert not used.is_error and used.structured_content["items"][0]["slug"] == "home"
    print("stdio modes: readonly, groups and discover ok")


async def elicitation_over_stdio(data: str) -> None:
    import mcp.types as types

    asked = []

    def answering(approve: bool):
        async def callback(context, params):
            asked.append(params.message)
            return types.ElicitResult(action="accept", content={"approve": approve})

        return callback

    # A client declared interactive: its user's answer counts.
    interactive = StdioServerParameters(
        command=BIN, args=["mcp", "--data", data, "--interactive"], env={"QUIRE_LOG": "warn"}
    )
    for approve in (False, True):
        async with stdio_client(interactive) as (read, write):
            async with ClientSession(read, write, elicitation_callback=answering(approve)) as session:
                await session.initialize()
                page = await session.call_tool("createPage", {"name": "Ask me", "slug": f"ask-me-{approve}".lower()})
                page_id = page.structured_content["item"]["id"]
                result = await session.call_tool("deletePage", {"ids": [page_id]})
                if approve:
                    assert not result.is_error, result
                    assert "Archived 1 page(s)" in result.structured_content["message"]
                else:
                    assert result.is_error
                    assert "declined by the user" in result.structured_content["error"]
    assert len(asked) == 2 and "Would archive 1 page(s)" in asked[0], asked
    # A client not declared interactive is a program holding credentials:
    # it is never asked, whatever it answers, and a person approves in Quire.
    plain = StdioServerParameters(command=BIN, args=["mcp", "--data", data], env={"QUIRE_LOG": "warn"})
    async with stdio_client(plain) as (read, write):
        async with ClientSession(read, write, elicitation_callback=answering(True)) as session:
            await session.initialize()
            page = await session.call_tool("createPage", {"name": "Keep me", "slug": "keep-me"})
            page_id = page.structured_content["item"]["id"]
            result = await session.call_tool("deletePage", {"ids": [page_id]})
            assert result.structured_content.get("requiresConfirmation") is True, result
            kept = await session.call_tool("getPage", {"slug": "keep-me"})
            assert kept.structured_content["items"][0]["id"] == page_id, kept
    assert len(asked) == 2, "a client not declared interactive is never asked"
    print("stdio elicitation: an interactive client's yes archives, its no rejects; another is never asked")


def start_server(data: str):
    env = dict(os.environ, QUIRE_BOOTSTRAP_TOKEN=TOKEN, QUIRE_LOG="warn")
    proc = subprocess.Popen(
        [BIN, "serve", "--addr", "127.0.0.1:0", "--data", data],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    deadline = time.time() + 60
    seen = []
    while time.time() < deadline:
        line = proc.stderr.readline()
        seen.append(line)
        match = re.search(r"listening on http://(\S+)", line)
        if match:
            return proc, match.group(1)
        if line == "" and proc.poll() is not None:
            break
    proc.kill()
    raise RuntimeError(f"server did not start (exit {proc.poll()}): {''.join(seen)[-2000:]}")


async def over_http(addr: str) -> None:
    client = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
    async with client:
        async with streamable_http_client(f"http://{addr}/mcp", http_client=client) as streams:
            read, write = streams[0], streams[1]
            async with ClientSession(read, write) as session:
                await exercise(session, "http")


def refused_without_token(addr: str) -> None:
    for headers in ({}, {"Authorization": "Bearer not-a-token"}):
        request = urllib.request.Request(
            f"http://{addr}/mcp",
            data=b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
            headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers},
        )
        try:
            urllib.request.urlopen(request, timeout=10)
            raise AssertionError("an MCP request without a valid token was accepted")
        except urllib.error.HTTPError as e:
            assert e.code == 401, e.code
    print("http: 401 without a valid token")


def main() -> None:
    with tempfile.TemporaryDirectory() as stdio_data, tempfile.TemporaryDirectory() as http_data:
        asyncio.run(over_stdio(stdio_data))
        asyncio.run(modes_over_stdio(stdio_data))
        asyncio.run(elicitation_over_stdio(stdio_data))
        proc, addr = start_server(http_data)
        try:
            refused_without_token(addr)
            asyncio.run(over_http(addr))
        finally:
            proc.kill()
            proc.wait()
    print("MCP conformance: all checks passed")


if __name__ == "__main__":
    main()
    sys.exit(0)
