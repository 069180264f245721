"""End-to-end check of the connector with the official MCP Python SDK.

Usage: python sdk_client.py BASE_URL API_KEY bearer|query

Connects over streamable HTTP (authenticating with the bearer header, or with the ?key= connector
URL), lets the SDK negotiate (it probes the newer discovery method first and falls back to the
initialize handshake), lists the tools, calls generate on a local engine, polls task_status until the
task succeeds and downloads the output, then runs listing_enhance on it the same way, lot_trace on it
synchronously, a listing kit (whose PDF is a `document` output) read back with task_status, and a long
video cancelled with cancel_task. The
SDK checks every successful result against the tool's output schema; the answers are the HTTP API's
views (`id`, `output`). Exits non-zero on any mismatch.
"""

import asyncio
import sys
import time
import urllib.request

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

EXPECTED_TOOLS = [
    "list_models", "generate", "listing_enhance", "lot_trace", "listing_kit", "reel", "reel_status", "task_status",
    "cancel_task",
]


def check(condition: bool, message: str) -> None:
    if not condition:
        raise SystemExit(f"FAIL: {message}")


async def wait(client: Client, task_id: str) -> dict:
    """Polls task_status until the task ends; returns its structured status, which must be success."""
    deadline = time.monotonic() + 120
    while True:
        status = await client.call_tool("task_status", {"id": task_id})
        check(not status.is_error, f"task_status failed: {status.content}")
        state = status.structured_content["status"]
        if state in ("succeeded", "failed"):
            break
        check(time.monotonic() < deadline, "task did not finish")
        await asyncio.sleep(0.2)
    check(state == "succeeded", f"task ended {state}: {status.structured_content}")
    return status.structured_content


async def main(base_url: str, key: str, mode: str) -> None:
    if mode == "bearer":
        url, headers = f"{base_url}/api/mcp", {"Authorization": f"Bearer {key}"}
    else:
        url, headers = f"{base_url}/api/mcp?key={key}", {}
    http = create_mcp_http_client(headers=headers)
    async with Client(streamable_http_client(url, http_client=http)) as client:
        check(client.protocol_version in ("2025-11-25", "2025-06-18", "2025-03-26"), f"negotiated {client.protocol_version}")
        check(client.server_info is not None and client.server_info.name == "media-gateway", f"server info {client.server_info}")

        tools = await client.list_tools()
        names = [tool.name for tool in tools.tools]
        check(names == EXPECTED_TOOLS, f"tools {names}")

        models = await client.call_tool("list_models", {"family": "image_generation"})
        check(not models.is_error, f"list_models failed: {models.content}")
        check(any(m["id"] == "alpha-schnell" for m in models.structured_content["models"]), "alpha-schnell listed")

        started = await client.call_tool(
            "generate",
            {"model": "alpha-schnell", "prompt": "a sunlit porch", "params": {"width": 320, "height": 256}},
        )
        check(not started.is_error, f"generate failed: {started.content}")
        task_id = started.structured_content["id"]
        print(f"[{mode}] generate -> {task_id} price {started.structured_content['price_usd']}")

        status = await wait(client, task_id)
        output = status["output"][0]
        check(output["type"] == "image", f"output {output}")
        with urllib.request.urlopen(output["url"]) as response:
            body = response.read()
        check(body[:8] == b"\x89PNG\r\n\x1a\n", "output is a PNG")
        print(f"[{mode}] succeeded, cost {status['cost_usd']}, downloaded {len(body)} bytes")

        # The recipe tool, fed the generated picture (the SDK checks every result against its schema).
        enhanced = await client.call_tool("listing_enhance", {"image_url": output["url"], "notes": "brighter"})
        check(not enhanced.is_error, f"listing_enhance failed: {enhanced.content}")
        status = await wait(client, enhanced.structured_content["id"])
        with urllib.request.urlopen(status["output"][0]["url"]) as response:
            check(response.read()[:2] == b"\xff\xd8", "enhanced photo is a JPEG")
        print(f"[{mode}] listing_enhance succeeded, cost {status['cost_usd']}")

        # The synchronous recipe: a 100 x 100 px square at 0.5 m/px is 2,500 m^2, answered with the result.
        traced = await client.call_tool(
            "lot_trace",
            {
                "image_url": output["url"],
                "points": [[50, 50], [150, 50], [150, 150], [50, 150]],
                "params": {"meters_per_pixel": 0.5},
            },
        )
        check(not traced.is_error, f"lot_trace failed: {traced.content}")
        result = traced.structured_content
        if result["status"] == "queued":
            result = (await wait(client, result["id"]))["result"]
        check(abs(result["square_meters"] - 2500.0) < 1.0, f"lot_trace area {result['square_meters']}")
        print(f"[{mode}] lot_trace succeeded, {result['acres']} acres")

        # A kit answers with its PDF; task_status then reports a `document` output the schema allows.
        kit = await client.call_tool(
            "listing_kit",
            {"photos": [output["url"]], "details": {"address": "42 Harbor Lane", "price": 525000}},
        )
        check(not kit.is_error, f"listing_kit failed: {kit.content}")
        status = await wait(client, kit.structured_content["id"])
        kinds = sorted({o["type"] for o in status["output"]})
        check("document" in kinds, f"listing kit outputs {kinds}")
        print(f"[{mode}] listing_kit succeeded, outputs {kinds}")

        # A long video, cancelled before it ends: failed, "cancelled by client", and a second cancel
        # is refused with already_finished (the SDK checks the answer against the output schema).
        long = await client.call_tool(
            "generate", {"model": "lambda-t2v", "prompt": "a slow walkthrough", "params": {"duration": 10}}
        )
        check(not long.is_error, f"generate failed: {long.content}")
        cancelled = await client.call_tool("cancel_task", {"id": long.structured_content["id"]})
        check(not cancelled.is_error, f"cancel_task failed: {cancelled.content}")
        ended = cancelled.structured_content
        check(ended["status"] == "failed" and ended["error"] == "cancelled by client", f"cancelled {ended}")
        again = await client.call_tool("cancel_task", {"id": long.structured_content["id"]})
        check(again.is_error, "a second cancel is refused")
        print(f"[{mode}] cancel_task ended {ended['id']}: {ended['error']}")

        bad = await client.call_tool("generate", {"model": "alpha-schnell"})
        check(bad.is_error, "a generate without a prompt is a tool error")
        check(bad.structured_content is None or bad.structured_content.get("code") == "invalid_input", f"error code {bad.structured_content}")


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[3] not in ("bearer", "query"):
        raise SystemExit(__doc__)
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))
