// The AG-UI suite's server: `quire serve` on a free loopback port with an
// empty data directory (the demo site), its admin token read from what it
// prints on first start, and a REST helper.

import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));

/** The binary under test: QUIRE_BIN, or the debug build of this checkout. */
export const BIN = path.resolve(process.env.QUIRE_BIN ?? path.join(here, "..", "..", "target", "debug", "quire"));

/** The environment quire runs in: quiet logs, nothing chosen from outside but `extra`. */
function quireEnv(extra) {
  const env = { ...process.env, QUIRE_LOG: "warn" };
  for (const key of ["QUIRE_BOOTSTRAP_TOKEN", "QUIRE_TOKEN", "QUIRE_CONFIG", "QUIRE_PUBLIC_URL"]) delete env[key];
  for (const key of Object.keys(env)) if (key.startsWith("QUIRE_LLM_")) delete env[key];
  return { ...env, ...extra };
}

/** Starts `quire serve`; answers its base URL, admin token and `stop()`. */
export async function startServer(extraEnv = {}) {
  const data = mkdtempSync(path.join(tmpdir(), "quire-agui-"));
  const child = spawn(BIN, ["serve", "--addr", "127.0.0.1:0", "--data", data], {
    env: quireEnv(extraEnv),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  const found = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`quire serve did not start:\n${stdout}\n${stderr}`)), 60_000);
    const check = () => {
      const addr = stderr.match(/listening on (http:\/\/\S+)/);
      const token = stdout.match(/Admin token[^\n]*\n\s*\n\s*(\S+)/);
      if (addr && token) {
        clearTimeout(timer);
        resolve({ base: addr[1], token: token[1] });
      }
    };
    child.stdout.on("data", (c) => { stdout += c; check(); });
    child.stderr.on("data", (c) => { stderr += c; check(); });
    child.on("exit", (code) => { clearTimeout(timer); reject(new Error(`quire serve exited (${code}):\n${stderr}`)); });
  });
  child.removeAllListeners("exit");
  return {
    ...found,
    async stop() {
      if (child.exitCode === null) {
        child.kill("SIGINT");
        await new Promise((r) => (child.exitCode !== null ? r() : child.on("exit", r)));
      }
      rmSync(data, { recursive: true, force: true });
    },
  };
}

/** A REST call with the admin token; answers { status, body }. */
export async function api(server, method, path, body) {
  const res = await fetch(`${server.base}${path}`, {
    method,
    headers: { authorization: `Bearer ${server.token}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  let parsed = text;
  try { parsed = JSON.parse(text); } catch { /* not JSON */ }
  return { status: res.status, body: parsed };
}
