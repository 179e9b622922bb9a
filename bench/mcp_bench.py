"""tools/call round trip of getPage over MCP, stdio and streamable HTTP,
measured from the official Python client (pip install mcp==2.3.0).

Run: cargo build --release && python3 bench/mcp_bench.py   (QUIRE_BIN, N to override)
"""

import asyncio
import os
import re
import statistics
import subprocess
import tempfile
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

BIN = os.path.abspath(os.environ.get("QUIRE_BIN", "target/release/quire"))
N = int(os.environ.get("N", "1000"))
TOKEN = "mcp-bench-token-0123456789abcdef"


async def measure(session: ClientSession) -> tuple[float, float]:
    await session.initialize()
    for _ in range(50):
        await session.call_tool("getPage", {"slug": "home"})
    samples = []
    for _ in range(N):
        start = time.perf_counter()
        result = await session.call_tool("getPage", {"slug": "home"})
        samples.append((time.perf_counter() - start) * 1e3)
        assert not result.is_error
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.99) - 1]


async def stdio(data: str):
    params = StdioServerParameters(command=BIN, args=["mcp", "--data", data], env={"QUIRE_LOG": "warn"})
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            return await measure(session)


async def http(addr: str):
    async with create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"}) as client:
        async with streamable_http_client(f"http://{addr}/mcp", http_client=client) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                return await measure(session)


def main():
    with tempfile.TemporaryDirectory() as data:
        subprocess.run([BIN, "seed", "--data", data], check=True, stdout=subprocess.DEVNULL)
        p50, p99 = asyncio.run(stdio(data))
        print(f"| stdio | {N} | {p50:.2f} ms | {p99:.2f} ms |")
        env = dict(os.environ, QUIRE_BOOTSTRAP_TOKEN=TOKEN, QUIRE_LOG="warn")
        proc = subprocess.Popen([BIN, "serve", "--addr", "127.0.0.1:0", "--data", data],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
        try:
            addr = None
            while addr is None:
                m = re.search(r"listening on http://(\S+)", proc.stderr.readline())
                addr = m.group(1) if m else None
            p50, p99 = asyncio.run(http(addr))
            print(f"| streamable HTTP | {N} | {p50:.2f} ms | {p99:.2f} ms |")
        finally:
            proc.kill()


if __name__ == "__main__":
    main()
