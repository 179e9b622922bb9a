// Shared by the Node conformance tests: the quire binary, temporary data
// directories, a `quire serve` on a free port with the admin token it prints,
// and the portability rules MCP Inspector applies to tool schemas.

import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));

/** The binary under test: QUIRE_BIN, or the debug build of this checkout. */
export const BIN = path.resolve(process.env.QUIRE_BIN ?? path.join(here, "..", "..", "target", "debug", "quire"));

/** The environment quire runs in: quiet logs, no token chosen from outside. */
export function quireEnv(extra = {}) {
  const env = { ...process.env, QUIRE_LOG: "warn", ...extra };
  delete env.QUIRE_BOOTSTRAP_TOKEN;
  delete env.QUIRE_TOKEN;
  delete env.QUIRE_CONFIG;
  return env;
}

const made = [];

/** A fresh directory, removed by `cleanup()`. */
export function tempDir(label) {
  const dir = mkdtempSync(path.join(tmpdir(), `quire-${label}-`));
  made.push(dir);
  return dir;
}

/** Removes the directories `tempDir` made. */
export function cleanup() {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** Runs the quire CLI and answers its stdout (throws with its stderr on failure). */
export function quire(args) {
  return execFileSync(BIN, args, { env: quireEnv(), encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

/** A seeded data directory and an admin token for it (`quire token create`). */
export function seededWithToken(label) {
  const data = tempDir(label);
  quire(["seed", "--data", data]);
  const token = quire(["token", "create", "--group", "admin", "--name", label, "--data", data]).trim();
  if (!token) throw new Error("quire token create printed no token");
  return { data, token };
}

/**
 * Starts `quire serve` on a free loopback port with an empty data directory
 * (and `env` added to its environment) and reads what it prints: the
 * address (stderr) and the admin token shown once on first start (stdout).
 */
export async function startServer(label, env = {}) {
  const data = tempDir(label);
  const child = spawn(BIN, ["serve", "--addr", "127.0.0.1:0", "--data", data], {
    env: quireEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  const found = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`quire serve did not start:\n${stdout}\n${stderr}`)), 60_000);
    const check = () => {
      const addr = stderr.match(/listening on http:\/\/(\S+)/);
      const token = stdout.match(/Admin token[^\n]*\n\s*\n\s*(\S+)/);
      if (addr && token) {
        clearTimeout(timer);
        resolve({ addr: addr[1], token: token[1] });
      }
    };
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
      check();
    });
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
      check();
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`quire serve exited (${code}):\n${stdout}\n${stderr}`));
    });
  });
  child.removeAllListeners("exit");
  return {
    ...found,
    data,
    url: `http://${found.addr}/mcp`,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

/**
 * What MCP Inspector reports as unportable in a tool schema: `type` arrays,
 * subschemas that constrain nothing, bare booleans where a schema belongs,
 * and `$ref`s to other documents. Answers one line per finding.
 */
export function portabilityFindings(schema, at = "") {
  const findings = [];
  const keywordsThatConstrain = [
    "type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
    "maxLength", "minLength", "pattern", "format", "maxItems", "minItems", "uniqueItems", "maxProperties",
    "minProperties", "required", "allOf", "anyOf", "oneOf", "not", "items", "prefixItems", "properties",
    "patternProperties", "additionalProperties", "$ref",
  ];
  const walk = (node, where, keyword) => {
    if (typeof node === "boolean") {
      if (!["additionalProperties", "unevaluatedProperties", "additionalItems", "unevaluatedItems"].includes(keyword)) {
        findings.push(`${where}: bare ${node}`);
      }
      return;
    }
    if (node === null || typeof node !== "object" || Array.isArray(node)) return;
    if (Array.isArray(node.type)) findings.push(`${where}: type array ${JSON.stringify(node.type)}`);
    if (typeof node.$ref === "string" && !node.$ref.startsWith("#")) findings.push(`${where}: remote $ref`);
    if (keyword !== "not" && !Object.keys(node).some((k) => keywordsThatConstrain.includes(k))) {
      findings.push(`${where}: constrains nothing`);
    }
    for (const key of ["properties", "patternProperties", "$defs", "definitions"]) {
      for (const [name, sub] of Object.entries(node[key] ?? {})) walk(sub, `${where}.${key}.${name}`, key);
    }
    for (const key of ["allOf", "anyOf", "oneOf", "prefixItems"]) {
      (node[key] ?? []).forEach((sub, i) => walk(sub, `${where}.${key}[${i}]`, key));
    }
    for (const key of ["items", "not", "additionalProperties", "contains", "propertyNames"]) {
      if (key in node) walk(node[key], `${where}.${key}`, key);
    }
  };
  walk(schema, at, undefined);
  return findings;
}

/** The words of `text` that read as tool names (`getPage`, `browseImages`). */
export function toolLikeNames(text, verbs) {
  const pattern = new RegExp(`\\b(?:${verbs.join("|")})[A-Z][A-Za-z]*\\b`, "g");
  return [...new Set(text.match(pattern) ?? [])];
}
