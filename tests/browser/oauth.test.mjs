// Remote MCP with OAuth, as a real client does it: the official MCP
// TypeScript SDK's client (pinned by tests/mcp) meets /mcp's 401, discovers
// the metadata, registers itself, and sends the person to the
// authorization endpoint; in Chromium the person signs in, reads the
// consent screen (axe-core on it), chooses read-only tools and allows; the
// client exchanges the code (PKCE) and lists and calls tools with its
// token. The refusals (wrong verifier, a code or refresh token used twice,
// another resource, an expired token, a revoked grant) are tested in
// crates/quire-web/tests/oauth.rs and crates/quire-store/src/oauth.rs.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { Client } from "../mcp/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js";
import { StreamableHTTPClientTransport } from "../mcp/node_modules/@modelcontextprotocol/sdk/dist/esm/client/streamableHttp.js";
import { UnauthorizedError } from "../mcp/node_modules/@modelcontextprotocol/sdk/dist/esm/client/auth.js";
import { chooseAdminPassword, launch, noViolations, shot, signedIn, startServer } from "./harness.mjs";

const ADMIN = "admin@localhost";
const PASSWORD = "a long admin password";

let server;
let browser;
let callback;

before(async () => {
  server = await startServer();
  browser = await launch();
  await chooseAdminPassword(browser, server, PASSWORD);
  // The client's redirect URI: a loopback server that answers the browser.
  callback = http.createServer((req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end("<!doctype html><title>Signed in</title><p>You can close this window.</p>");
  });
  await new Promise((r) => callback.listen(0, "127.0.0.1", r));
});

after(async () => {
  callback?.close();
  await browser?.close();
  await server?.stop();
});

/** An OAuthClientProvider that keeps everything in memory. */
function provider(redirectUrl) {
  const kept = { client: undefined, tokens: undefined, verifier: undefined, authorizationUrl: undefined };
  return {
    kept,
    get redirectUrl() { return redirectUrl; },
    get clientMetadata() {
      return {
        client_name: "SDK test client",
        redirect_uris: [redirectUrl],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      };
    },
    clientInformation() { return kept.client; },
    saveClientInformation(info) { kept.client = info; },
    tokens() { return kept.tokens; },
    saveTokens(tokens) { kept.tokens = tokens; },
    redirectToAuthorization(url) { kept.authorizationUrl = url; },
    saveCodeVerifier(verifier) { kept.verifier = verifier; },
    codeVerifier() { return kept.verifier; },
  };
}

describe("remote MCP with OAuth", () => {
  test("the SDK client is granted read-only tools by a person in the back-office and calls them", async () => {
    const redirectUrl = `http://127.0.0.1:${callback.address().port}/callback`;
    const auth = provider(redirectUrl);
    const endpoint = new URL(`${server.base}/mcp`);

    // No token: the client discovers, registers and asks to be authorized.
    const first = new Client({ name: "sdk-oauth", version: "1.0.0" });
    await assert.rejects(first.connect(new StreamableHTTPClientTransport(endpoint, { authProvider: auth })), UnauthorizedError);
    assert.ok(auth.kept.client?.client_id?.startsWith("qc_"), "registered");
    const asked = auth.kept.authorizationUrl;
    assert.equal(`${asked.origin}${asked.pathname}`, `${server.base}/oauth/authorize`);
    assert.equal(asked.searchParams.get("code_challenge_method"), "S256");
    assert.equal(asked.searchParams.get("resource"), `${server.base}/mcp`);

    // The person signs in and consents.
    const page = await signedIn(browser, server, ADMIN, PASSWORD);
    await page.goto(asked.toString());
    await page.getByRole("heading", { name: "Allow SDK test client to use Quire?" }).waitFor();
    await noViolations(page, "the consent screen");
    await shot(page, "oauth-consent");
    await page.getByLabel("Acts as").selectOption("editor");
    assert.ok(await page.getByRole("radio", { name: /readonly/ }).isChecked(), "read-only is the default");
    await page.getByRole("button", { name: "Allow" }).click();
    await page.waitForURL((url) => url.toString().startsWith(redirectUrl));
    const answered = new URL(page.url());
    assert.equal(answered.searchParams.get("state"), asked.searchParams.get("state"));
    assert.equal(answered.searchParams.get("iss"), server.base);
    const code = answered.searchParams.get("code");
    assert.ok(code, "a code came back");
    await page.context().close();

    // The client exchanges the code and connects with its token.
    const transport = new StreamableHTTPClientTransport(endpoint, { authProvider: auth });
    await transport.finishAuth(code);
    assert.equal(auth.kept.tokens.token_type, "Bearer");
    assert.ok(auth.kept.tokens.refresh_token, "with a refresh token");
    const client = new Client({ name: "sdk-oauth", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(endpoint, { authProvider: auth }));
    const { tools } = await client.listTools();
    assert.ok(tools.length > 5, `${tools.length} tools`);
    assert.deepEqual(tools.filter((t) => t.annotations?.readOnlyHint !== true).map((t) => t.name), [], "only read-only tools");
    const read = await client.callTool({ name: "getPage", arguments: { slug: "home" } });
    assert.notEqual(read.isError, true, JSON.stringify(read.content));
    await client.close();

    // The grant is listed with the site's tokens, as the client's.
    const tokens = await fetch(`${server.base}/api/v1/tokens`, { headers: { authorization: `Bearer ${server.token}` } }).then((r) => r.json());
    const grant = tokens.items.find((t) => t.name === "SDK test client (OAuth)");
    assert.ok(grant, JSON.stringify(tokens.items.map((t) => t.name)));
    assert.equal(grant.group, "editor");
    assert.equal(grant.mcpTools, "readonly");
  });
});
