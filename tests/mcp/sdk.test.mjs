// MCP conformance of `quire mcp` (stdio) and `quire serve` (/mcp over
// streamable HTTP), driven by the official TypeScript SDK.
//
// Run: npm ci && node --test sdk.test.mjs   (QUIRE_BIN picks the binary)

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import {
  BIN,
  cleanup,
  portabilityFindings,
  quire,
  quireEnv,
  seededWithToken,
  startServer,
  tempDir,
  toolLikeNames,
} from "./harness.mjs";

const counts = { tools: 0, schemas: 0, calls: 0, validated: 0 };
const ajv = new AjvJsonSchemaValidator();

// Reported once the whole file has run (a root `after` can run between suites).
process.on("exit", () => {
  cleanup();
  console.log(
    `TypeScript SDK: ${counts.tools} tools checked, ${counts.schemas} schemas compiled, ` +
      `${counts.calls} calls, ${counts.validated} results validated`,
  );
});

function newClient(capabilities = {}) {
  return new Client({ name: "quire-conformance", version: "1.0.0" }, { capabilities });
}

/** Calls a tool; the SDK itself validates structuredContent against the declared outputSchema. */
async function call(client, tools, name, args) {
  const result = await client.callTool({ name, arguments: args });
  counts.calls++;
  const tool = tools.get(name);
  assert.ok(result.structuredContent, `${name} answers structured content`);
  const check = ajv.getValidator(tool.outputSchema)(result.structuredContent);
  assert.ok(check.valid, `${name}: ${check.errorMessage}\n${JSON.stringify(result.structuredContent)}`);
  counts.validated++;
  assert.equal(result.isError === true, result.structuredContent.success === false, `${name}: isError follows success`);
  return result;
}

/** Lists the tools and checks every schema: an object, compilable, portable. */
async function checkTools(client, label) {
  const { tools } = await client.listTools();
  assert.equal(tools.length, 68, `${label}: ${tools.map((t) => t.name)}`);
  const shapes = new Set();
  for (const tool of tools) {
    for (const kind of ["inputSchema", "outputSchema"]) {
      const schema = tool[kind];
      assert.equal(schema?.type, "object", `${label} ${tool.name}.${kind} is an object schema`);
      assert.doesNotThrow(() => ajv.getValidator(schema), `${tool.name}.${kind} compiles`);
      counts.schemas++;
      assert.deepEqual(portabilityFindings(schema, `${tool.name}.${kind}`), []);
    }
    assert.ok(Array.isArray(tool.outputSchema.anyOf), `${tool.name}: one branch per way it answers`);
    shapes.add(JSON.stringify(tool.outputSchema));
    assert.equal(typeof tool.title, "string");
    assert.equal(typeof tool.annotations?.readOnlyHint, "boolean");
    counts.tools++;
  }
  assert.ok(shapes.size >= 15, `${label}: tools declare their own result shapes (${shapes.size} distinct)`);
  return new Map(tools.map((t) => [t.name, t]));
}

/** What every transport must do alike. */
async function exercise(client, label) {
  const caps = client.getServerCapabilities();
  for (const capability of ["tools", "prompts", "resources", "completions"]) {
    assert.ok(caps[capability], `${label}: ${capability} advertised`);
  }
  const tools = await checkTools(client, label);

  // the instructions name only tools that exist
  const verbs = [...new Set([...tools.keys()].map((n) => n.match(/^[a-z]+/)[0]))].concat(["browse", "import", "fetch"]);
  const named = toolLikeNames(client.getInstructions() ?? "", verbs);
  assert.ok(named.length >= 20, `${label}: the instructions name the tools (${named})`);
  for (const name of named) assert.ok(tools.has(name), `${label}: instructions name ${name}, which does not exist`);

  // reads, validated against their declared schemas
  const home = await call(client, tools, "getPage", { slug: "home", includeContent: true });
  assert.equal(home.structuredContent.items[0].slug, "home");
  await call(client, tools, "getPost", { all: true });
  await call(client, tools, "getNavItem", { navigationId: "header" });
  await call(client, tools, "searchNotes", { query: "pricing copy" });

  // a write, and a failure that still matches the schema (error branch)
  const slug = `ts-${label}`;
  const created = await call(client, tools, "createPage", { name: `From ${label}`, slug });
  const pageId = created.structuredContent.item.id;
  const failing = await call(client, tools, "createPage", { name: "No slug" });
  assert.equal(failing.isError, true);
  assert.equal(failing.structuredContent.errorCode, "VALIDATION");
  assert.match(failing.content[0].text, /slug: required/);

  // resources: templates for pages and posts, read through the template
  const { resourceTemplates } = await client.listResourceTemplates();
  assert.deepEqual(
    resourceTemplates.map((t) => t.uriTemplate),
    ["quire://pages/{slug}", "quire://posts/{slug}"],
  );
  const about = await client.readResource({ uri: "quire://pages/about" });
  assert.match(about.contents[0].text, /"slug": "about"/);
  const completion = await client.complete({
    ref: { type: "ref/resource", uri: "quire://posts/{slug}" },
    argument: { name: "slug", value: "hel" },
  });
  assert.deepEqual(completion.completion.values, ["hello-quire"]);
  return { tools, pageId };
}

/** The preview of a destructive call, then the refusal to run it before a person approves. */
async function previewAndWait(client, tools, pageId) {
  const preview = await call(client, tools, "deletePage", { ids: [pageId] });
  const p = preview.structuredContent;
  assert.equal(p.requiresConfirmation, true);
  assert.match(p.confirmationId, /^cf_/);
  assert.ok(p.items.length >= 1 && p.expiresAt, JSON.stringify(p));
  const early = await call(client, tools, "deletePage", { ids: [pageId], confirmationId: p.confirmationId });
  assert.equal(early.structuredContent.errorCode, "APPROVAL_REQUIRED");
  return p.confirmationId;
}

describe("TypeScript SDK over stdio", () => {
  test("lists, calls and validates; a person approves a destructive call", async () => {
    // as a token's holder, so that the local admin of the CLI is another person
    const { data, token } = seededWithToken("ts-stdio");
    const client = newClient();
    await client.connect(
      new StdioClientTransport({ command: BIN, args: ["mcp", "--data", data, "--token", token], env: quireEnv() }),
    );
    try {
      const { tools, pageId } = await exercise(client, "stdio");
      const id = await previewAndWait(client, tools, pageId);
      const approved = JSON.parse(quire(["approvals", "approve", id, "--data", data]));
      assert.equal(approved.status, "approved");
      const done = await call(client, tools, "deletePage", { ids: [pageId], confirmationId: id });
      assert.match(done.structuredContent.message, /Archived 1 page/);
      const again = await call(client, tools, "deletePage", { ids: [pageId], confirmationId: id });
      assert.equal(again.structuredContent.errorCode, "APPROVAL_REQUIRED", "an approval is used once");
    } finally {
      await client.close();
    }
  });

  test("a client declared interactive approves through elicitation", async () => {
    const data = tempDir("ts-elicit");
    const asked = [];
    const client = newClient({ elicitation: { form: {} } });
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return { action: "accept", content: { approve: true } };
    });
    await client.connect(
      new StdioClientTransport({ command: BIN, args: ["mcp", "--data", data, "--interactive"], env: quireEnv() }),
    );
    try {
      const tools = await checkTools(client, "stdio elicitation");
      const page = await call(client, tools, "createPage", { name: "Ask", slug: "ask-ts" });
      const done = await call(client, tools, "deletePage", { ids: [page.structuredContent.item.id] });
      assert.notEqual(done.isError, true);
      assert.match(done.structuredContent.message, /Archived 1 page/);
      assert.equal(asked.length, 1);
      assert.match(asked[0], /Would archive 1 page\(s\)/);
      assert.doesNotMatch(asked[0], /confirmationId|call again/, "the question names no step for the model");
    } finally {
      await client.close();
    }
  });

  test("a client not declared interactive is never asked: a person approves in Quire", async () => {
    const data = tempDir("ts-no-elicit");
    const asked = [];
    const client = newClient({ elicitation: { form: {} } });
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return { action: "accept", content: { approve: true } };
    });
    await client.connect(new StdioClientTransport({ command: BIN, args: ["mcp", "--data", data], env: quireEnv() }));
    try {
      const tools = await checkTools(client, "stdio, not interactive");
      const page = await call(client, tools, "createPage", { name: "Keep", slug: "keep-ts" });
      const preview = await call(client, tools, "deletePage", { ids: [page.structuredContent.item.id] });
      assert.equal(preview.structuredContent.requiresConfirmation, true);
      assert.equal(asked.length, 0, "its own answer would approve its own request");
      const kept = await call(client, tools, "getPage", { slug: "keep-ts" });
      assert.equal(kept.structuredContent.items.length, 1);
    } finally {
      await client.close();
    }
  });
});

describe("TypeScript SDK over streamable HTTP", () => {
  test("lists, calls and validates; a person approves over REST", async () => {
    const server = await startServer("ts-http");
    try {
      const client = newClient();
      await client.connect(
        new StreamableHTTPClientTransport(new URL(server.url), {
          requestInit: { headers: { Authorization: `Bearer ${server.token}` } },
        }),
      );
      try {
        const { tools, pageId } = await exercise(client, "http");
        const id = await previewAndWait(client, tools, pageId);
        // the MCP client's own token may not approve its request; an editor's may
        const editor = quire(["token", "create", "--group", "editor", "--name", "approver", "--data", server.data]).trim();
        const own = await fetch(`http://${server.addr}/api/v1/approvals/${id}/approve`, {
          method: "POST",
          headers: { Authorization: `Bearer ${server.token}` },
        });
        assert.equal(own.status, 403);
        const approval = await fetch(`http://${server.addr}/api/v1/approvals/${id}/approve`, {
          method: "POST",
          headers: { Authorization: `Bearer ${editor}` },
        });
        assert.equal(approval.status, 200, await approval.text());
        const done = await call(client, tools, "deletePage", { ids: [pageId], confirmationId: id });
        assert.match(done.structuredContent.message, /Archived 1 page/);
      } finally {
        await client.close();
      }

      // refused: no token (401), a page of another origin (403)
      const init = {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
      };
      const post = (headers) =>
        fetch(server.url, {
          method: "POST",
          headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", ...headers },
          body: JSON.stringify(init),
        });
      assert.equal((await post({})).status, 401);
      const foreign = await post({ Authorization: `Bearer ${server.token}`, Origin: "https://evil.example" });
      assert.equal(foreign.status, 403);
      const own = await post({ Authorization: `Bearer ${server.token}`, Origin: `http://${server.addr}` });
      assert.equal(own.status, 200);
      await own.body?.cancel();
    } finally {
      await server.stop();
    }
  });
});
