// The official MCP conformance suite (@modelcontextprotocol/conformance),
// every server scenario it lists, against `quire serve` started with its
// test fixture (QUIRE_MCP_TEST_FIXTURE=1: the test_* tools, prompts and
// resources the scenarios call). Each scenario must end with no failed
// check. A server started without the variable offers none of the fixture.
//
// The suite's client sends no credentials, and /mcp requires a bearer
// token: a small proxy in front of the server adds the admin token to every
// request and passes everything else (Host and Origin included, for the
// DNS-rebinding scenario) as it came.
//
// Run: npm ci && node --test conformance.test.mjs   (QUIRE_BIN picks the binary)

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { cleanup, startServer, tempDir } from "../mcp/harness.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.join(here, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");
const run = promisify(execFile);
const totals = { scenarios: 0, passed: 0, checks: 0, warnings: 0 };

process.on("exit", () => {
  cleanup();
  console.log(
    `MCP conformance suite: ${totals.passed} of ${totals.scenarios} server scenarios passed, ` +
      `${totals.checks} checks, ${totals.warnings} warnings`,
  );
});

/** A proxy on a free loopback port that adds `Authorization: Bearer token`. */
async function authorizingProxy(target, token) {
  const [host, port] = [target.slice(0, target.lastIndexOf(":")), Number(target.slice(target.lastIndexOf(":") + 1))];
  const server = http.createServer((req, res) => {
    const upstream = http.request(
      { host, port, method: req.method, path: req.url, headers: { ...req.headers, authorization: `Bearer ${token}` } },
      (answer) => {
        res.writeHead(answer.statusCode, answer.headers);
        res.flushHeaders();
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    res.on("close", () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/mcp`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  };
}

/** The server scenarios the installed suite lists, in its order. */
async function serverScenarios() {
  const { stdout } = await run(process.execPath, [CLI, "list", "--server"]);
  return [...stdout.matchAll(/^\s+- (\S+)/gm)].map((m) => m[1]);
}

/** The checks of one scenario's run, as the suite saved them. */
function savedChecks(dir) {
  const found = [];
  const walk = (at) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const full = path.join(at, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name === "checks.json") found.push(...JSON.parse(readFileSync(full, "utf8")));
    }
  };
  if (existsSync(dir)) walk(dir);
  return found;
}

const scenarios = await serverScenarios();

describe("the conformance suite's server scenarios, against quire serve with its test fixture", () => {
  let server;
  let proxy;
  before(async () => {
    server = await startServer("conformance", { QUIRE_MCP_TEST_FIXTURE: "1" });
    proxy = await authorizingProxy(server.addr, server.token);
  });
  after(async () => {
    await proxy?.close();
    await server?.stop();
  });

  test("the suite lists server scenarios", () => {
    assert.ok(scenarios.length >= 30, `${scenarios}`);
  });

  for (const scenario of scenarios) {
    test(scenario, async () => {
      totals.scenarios++;
      const out = tempDir(`conformance-${scenario}`);
      let output;
      try {
        const done = await run(
          process.execPath,
          [CLI, "server", "--url", proxy.url, "--scenario", scenario, "--output-dir", out],
          { timeout: 120_000, maxBuffer: 16 * 1024 * 1024 },
        );
        output = done.stdout + done.stderr;
      } catch (e) {
        output = `${e.stdout ?? ""}${e.stderr ?? ""}`;
      }
      const checks = savedChecks(out);
      const failed = checks.filter((c) => c.status === "FAILURE");
      assert.ok(checks.length > 0, `${scenario}: the suite saved no checks\n${output}`);
      assert.deepEqual(
        failed.map((c) => `${c.id}: ${c.errorMessage ?? ""}`),
        [],
        `${scenario} failed:\n${output}`,
      );
      totals.checks += checks.filter((c) => c.status === "SUCCESS").length;
      const warnings = checks.filter((c) => c.status === "WARNING");
      totals.warnings += warnings.length;
      for (const w of warnings) console.log(`  ${scenario} warning ${w.id}: ${w.errorMessage ?? w.description}`);
      totals.passed++;
    });
  }
});

describe("a server started without the test mode", () => {
  test("offers none of the fixture's tools, prompts or resources", async () => {
    const server = await startServer("conformance-default");
    const proxy = await authorizingProxy(server.addr, server.token);
    const client = new Client({ name: "quire-conformance", version: "1.0.0" });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(proxy.url)));
      const { tools } = await client.listTools();
      const { prompts } = await client.listPrompts();
      const { resources } = await client.listResources();
      const { resourceTemplates } = await client.listResourceTemplates();
      assert.ok(tools.length > 40, "the usual tools are there");
      const fixture = [
        ...tools.map((t) => t.name).filter((n) => n.startsWith("test_") || n.startsWith("json_schema")),
        ...prompts.map((p) => p.name).filter((n) => n.startsWith("test_")),
        ...resources.map((r) => r.uri).filter((u) => u.startsWith("test://")),
        ...resourceTemplates.map((r) => r.uriTemplate).filter((u) => u.startsWith("test://")),
      ];
      assert.deepEqual(fixture, []);
      const refused = await client.callTool({ name: "test_simple_text", arguments: {} }).then(
        () => null,
        (e) => e,
      );
      assert.equal(refused?.code, -32602, `an unknown tool is a JSON-RPC error: ${refused}`);
    } finally {
      await client.close();
      await proxy.close();
      await server.stop();
    }
  });
});
