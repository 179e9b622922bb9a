// The back-office's browser tests: a `quire serve` on a free port with an
// empty data directory (its admin token and the admin's sign-in link read
// from what it prints), Debian's Chromium through Playwright, and helpers
// to sign in.

import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import AxeBuilder from "@axe-core/playwright";
import { chromium } from "playwright-core";

const here = path.dirname(fileURLToPath(import.meta.url));

/** The binary under test: QUIRE_BIN, or the debug build of this checkout. */
export const BIN = path.resolve(process.env.QUIRE_BIN ?? path.join(here, "..", "..", "target", "debug", "quire"));

/** The Chromium to drive: CHROMIUM, or Debian's. */
const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";

function quireEnv() {
  const env = { ...process.env, QUIRE_LOG: "warn" };
  for (const key of ["QUIRE_BOOTSTRAP_TOKEN", "QUIRE_TOKEN", "QUIRE_CONFIG", "QUIRE_PUBLIC_URL"]) delete env[key];
  for (const key of Object.keys(env)) if (key.startsWith("QUIRE_LLM_")) delete env[key];
  return env;
}

/** Runs the quire CLI against `data`; answers stdout. */
export function quire(data, args, input) {
  return execFileSync(BIN, [...args, "--data", data], {
    env: quireEnv(),
    encoding: "utf8",
    input,
    stdio: ["pipe", "pipe", "pipe"],
  });
}

/**
 * Starts `quire serve` on an empty data directory; answers its base URL,
 * admin token, the admin's one-time sign-in link, the data directory and
 * `stop()`.
 */
export async function startServer(extraEnv = {}) {
  const data = mkdtempSync(path.join(tmpdir(), "quire-browser-"));
  const child = spawn(BIN, ["serve", "--addr", "127.0.0.1:0", "--data", data], {
    env: { ...quireEnv(), ...extraEnv },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  const found = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`quire serve did not start:\n${stdout}\n${stderr}`)), 60_000);
    const check = () => {
      const addr = stderr.match(/listening on (http:\/\/\S+)/);
      const token = stdout.match(/Admin token[^\n]*\n\s*\n\s*(\S+)/);
      const link = stdout.match(/(http:\/\/\S+\/sign-in\/link\/\S+)/);
      if (addr && token && link) {
        clearTimeout(timer);
        resolve({ base: addr[1], token: token[1], link: link[1] });
      }
    };
    child.stdout.on("data", (c) => { stdout += c; check(); });
    child.stderr.on("data", (c) => { stderr += c; check(); });
    child.on("exit", (code) => { clearTimeout(timer); reject(new Error(`quire serve exited (${code}):\n${stderr}`)); });
  });
  return {
    ...found,
    data,
    async stop() {
      child.kill("SIGINT");
      await new Promise((r) => (child.exitCode !== null ? r() : child.on("exit", r)));
      rmSync(data, { recursive: true, force: true });
    },
  };
}

/** Launches headless Chromium (flags that keep it off the network). */
export async function launch() {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/** Uses the first start's one-time link to choose the admin's password. */
export async function chooseAdminPassword(browser, server, password) {
  const page = await browser.newPage();
  await page.goto(server.link);
  await page.getByLabel("New password").fill(password);
  await page.getByLabel("Repeat it").fill(password);
  await page.getByRole("button", { name: "Set password and sign in" }).click();
  await page.waitForURL(`${server.base}/`);
  await page.goto(`${server.base}/pages`);
  await page.close();
}

/** Signs `page` in through the sign-in form. */
export async function signIn(page, base, email, password) {
  await page.goto(`${base}/sign-in`);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
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

/** A new 1280×800 browser context signed in as `email`, on the page tree. */
export async function signedIn(browser, server, email, password) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await signIn(page, server.base, email, password);
  await page.waitForURL(`${server.base}/`);
  await page.goto(`${server.base}/pages`);
  return page;
}

const SHOTS = process.env.SCREENSHOTS === "1" ? path.join(here, "..", "..", "docs", "screenshots") : null;

/** With SCREENSHOTS=1, writes the top of the screen to docs/screenshots/NAME.png. */
export async function shot(page, name) {
  if (!SHOTS) return;
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`) });
}

/** Fails on any serious or critical axe-core violation of the screen. */
export async function noSeriousViolations(page, what) {
  const results = await new AxeBuilder({ page }).analyze();
  const bad = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  assert.deepEqual(
    bad.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`),
    [],
    `${what}: serious or critical accessibility violations`,
  );
}

/** Fails on any axe-core violation of the screen, whatever its impact. */
export async function noViolations(page, what) {
  const results = await new AxeBuilder({ page }).analyze();
  assert.deepEqual(
    results.violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`),
    [],
    `${what}: accessibility violations`,
  );
}

/**
 * On an administrator's People screen (`page`), invites `email` as `group`
 * (with `name`, if given); answers the one-time sign-in link shown.
 */
export async function invite(page, { email, name, group }) {
  await page.getByLabel("Email").fill(email);
  if (name) await page.getByLabel("Name (optional)").fill(name);
  await page.getByLabel("Group", { exact: true }).selectOption(group);
  await page.getByRole("button", { name: "Invite" }).click();
  const link = (await page.locator("#new-link").textContent()).trim();
  assert.match(link, /^http:\/\/.+\/sign-in\/link\/ql_/);
  return link;
}

/**
 * Follows an invitation's one-time `link` in a new browser context
 * (1280×800 unless `viewport` says otherwise) and chooses `password`
 * (`onForm(page)` runs on the form before it is sent); answers the page,
 * signed in on the dashboard.
 */
export async function acceptInvitation(browser, link, password, { onForm, viewport } = {}) {
  const context = await browser.newContext({ viewport: viewport ?? { width: 1280, height: 800 } });
  const page = await context.newPage();
  await page.goto(link);
  await page.getByLabel("New password").fill(password);
  await page.getByLabel("Repeat it").fill(password);
  if (onForm) await onForm(page);
  await page.getByRole("button", { name: "Set password and sign in" }).click();
  await page.waitForURL(`${new URL(link).origin}/`);
  return page;
}
