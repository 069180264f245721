"""The connector with the official MCP Python SDK's OAuth client, against a real api-server.

Usage: python oauth_client.py BASE_URL INVITE_URL EMAIL SCREENSHOT_DIR

The SDK is given only `{BASE_URL}/api/mcp`. It meets the 401, discovers the protected resource
and the authorization server, registers itself, and opens the consent page: a headless Chromium
(tests/console-e2e/consent.mjs) accepts the operator's invite, sets the spend limit and allows; the
redirect comes back to a callback server here. The SDK exchanges the code (PKCE S256) and calls the
tools with the token. Then: the access token expires (the deployment issues them for 2 s) and the
SDK refreshes by itself; the token is revoked (then 401); and a second connection is disconnected
from the console (then 401). Exits non-zero on any mismatch.
"""

import asyncio
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qs, urlparse

import httpx
from mcp import Client
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

CONSENT = os.path.join(os.path.dirname(__file__), "../../../../tests/console-e2e/consent.mjs")


def check(condition: bool, message: str) -> None:
    if not condition:
        raise SystemExit(f"FAIL: {message}")


class MemoryStorage(TokenStorage):
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Callback:
    """A loopback server that takes the authorization redirect."""

    def __init__(self) -> None:
        self.query: dict[str, list[str]] | None = None
        self.arrived = threading.Event()
        callback = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                # Only the redirect counts: the browser may also ask this origin for /favicon.ico.
                target = urlparse(self.path)
                if target.path != "/callback":
                    self.send_response(404)
                    self.end_headers()
                    return
                if not callback.arrived.is_set():
                    callback.query = parse_qs(target.query)
                    callback.arrived.set()
                self.send_response(200)
                self.end_headers()
                self.wfile.write(b"connected; you may close this window")

            def log_message(self, *args):
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/callback"


async def connect(
    base_url: str, invite_url: str, email: str, screenshot: str
) -> tuple[MemoryStorage, OAuthClientProvider]:
    callback = Callback()
    storage = MemoryStorage()

    async def redirect_handler(authorization_url: str) -> None:
        check(authorization_url.startswith(f"{base_url}/console/authorize?"), authorization_url)
        query = parse_qs(urlparse(authorization_url).query)
        check(query.get("code_challenge_method") == ["S256"], f"PKCE S256: {query}")
        result = await asyncio.to_thread(
            subprocess.run,
            ["node", CONSENT, authorization_url, invite_url, email, screenshot],
            capture_output=True,
            text=True,
        )
        print(result.stdout.strip())
        check(result.returncode == 0, f"consent failed: {result.stdout} {result.stderr}")

    async def callback_handler() -> AuthorizationCodeResult:
        arrived = await asyncio.to_thread(callback.arrived.wait, 30)
        check(arrived and callback.query is not None, "the redirect never came back")
        query = callback.query
        check("code" in query, f"no code: {query}")
        return AuthorizationCodeResult(code=query["code"][0], state=query.get("state", [None])[0], iss=query.get("iss", [None])[0])

    metadata = OAuthClientMetadata(
        client_name="SDK e2e agent",
        redirect_uris=[callback.url],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )
    provider = OAuthClientProvider(
        server_url=f"{base_url}/api/mcp",
        client_metadata=metadata,
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )
    return storage, provider


async def use_tools(base_url: str, provider: OAuthClientProvider) -> None:
    http = create_mcp_http_client(auth=provider)
    async with Client(streamable_http_client(f"{base_url}/api/mcp", http_client=http)) as client:
        tools = await client.list_tools()
        names = [tool.name for tool in tools.tools]
        check("generate" in names and "cancel_task" in names, f"tools: {names}")
        queued = await client.call_tool("generate", {"model": "alpha-schnell", "prompt": "a porch at dusk"})
        check(not queued.is_error, f"generate: {queued.content}")
        task_id = queued.structured_content["id"]
        deadline = time.monotonic() + 60
        while True:
            status = await client.call_tool("task_status", {"id": task_id})
            check(not status.is_error, f"task_status: {status.content}")
            if status.structured_content["status"] in ("succeeded", "failed"):
                break
            check(time.monotonic() < deadline, "the job did not finish")
            await asyncio.sleep(0.3)
        check(status.structured_content["status"] == "succeeded", f"{status.structured_content}")
        print(f"oauth: generate ran with the token and cost {status.structured_content['cost_usd']} USD")


async def status_with(base_url: str, token: str) -> int:
    async with httpx.AsyncClient() as http:
        answer = await http.post(
            f"{base_url}/api/mcp",
            headers={"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"},
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
        )
        return answer.status_code


async def main(base_url: str, invite_url: str, email: str, screenshots: str) -> None:
    storage, provider = await connect(base_url, invite_url, email, f"{screenshots}/consent.png")
    await use_tools(base_url, provider)
    first = storage.tokens
    check(first is not None and first.refresh_token is not None, "tokens stored")
    check(await status_with(base_url, first.access_token) == 200, "the access token works")

    # The deployment's access tokens last 2 s: the SDK refreshes by itself on the next use.
    await asyncio.sleep(2.5)
    check(await status_with(base_url, first.access_token) == 401, "an expired access token is refused")
    await use_tools(base_url, provider)
    second = storage.tokens
    check(second.access_token != first.access_token and second.refresh_token != first.refresh_token, "rotated")
    print("oauth: the SDK refreshed an expired token and got a new refresh token")

    # Revocation (RFC 7009): the access token is refused afterwards.
    async with httpx.AsyncClient() as http:
        answer = await http.post(
            f"{base_url}/oauth/revoke", data={"token": second.access_token, "client_id": storage.client.client_id}
        )
        check(answer.status_code == 200, f"revoke: {answer.status_code}")
    check(await status_with(base_url, second.access_token) == 401, "a revoked token is refused")
    print("oauth: a revoked access token is refused")

    # A second agent, disconnected from the console: its token is refused at once.
    other_storage, other = await connect(base_url, invite_url, email, f"{screenshots}/consent-second.png")
    await use_tools(base_url, other)
    token = other_storage.tokens.access_token
    check(await status_with(base_url, token) == 200, "the second agent's token works")
    disconnect = await asyncio.to_thread(
        subprocess.run,
        ["node", CONSENT.replace("consent.mjs", "disconnect.mjs"), base_url, email, f"{screenshots}/agents.png"],
        capture_output=True,
        text=True,
    )
    print(disconnect.stdout.strip())
    check(disconnect.returncode == 0, f"disconnect failed: {disconnect.stdout} {disconnect.stderr}")
    check(await status_with(base_url, token) == 401, "a disconnected agent is refused")
    print("oauth: a disconnected agent is refused")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]))
