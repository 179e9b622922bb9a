// The site's administration in a real browser: an environment made as a
// copy of production, a page changed there, the two compared (the change
// seen field by field), promoted, production changed, the promotion undone
// after a question; a conflict refused with its reason and settled by a
// choice; a webhook subscribed with its secret shown once, and its delivery
// log; the instance's sites. axe-core on every screen and state, and each
// screen's weight with the stylesheet and script.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { api, chooseAdminPassword, launch, noViolations, shot, signedIn, startServer } from "./harness.mjs";

const ADMIN = "admin@localhost";
const PASSWORD = "a long admin password";

let server;
let browser;

before(async () => {
  server = await startServer();
  browser = await launch();
  await chooseAdminPassword(browser, server, PASSWORD);
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

/** A REST call with the admin token in environment `env`. */
async function inEnv(env, method, path, body) {
  const res = await fetch(`${server.base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${server.token}`,
      "x-quire-env": env,
      ...(body ? { "content-type": "application/json" } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  return res.json();
}

async function aboutIn(env) {
  return (await inEnv(env, "GET", "/api/v1/pages?limit=100")).items.find((p) => p.slug === "about");
}

/** The screen at `path` with its stylesheet and script, in bytes. */
async function weight(page, path) {
  const cookie = (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join("; ");
  const size = async (p) => (await (await fetch(`${server.base}${p}`, { headers: { cookie } })).arrayBuffer()).byteLength;
  const css = await page.locator('link[rel="stylesheet"]').getAttribute("href");
  const js = await page.locator("script[src]").getAttribute("src");
  return (await size(path)) + (await size(css)) + (await size(js));
}

describe("environments", () => {
  test("a copy of production is changed, compared, promoted into production and the promotion undone", async () => {
    const page = await signedIn(browser, server, ADMIN, PASSWORD);
    await page.getByRole("link", { name: "Environments" }).click();
    await noViolations(page, "environments");
    await page.getByLabel("Key (lowercase words joined by hyphens)").fill("preview");
    await page.getByLabel("Name (optional)").fill("Preview");
    await page.getByLabel("Starts as").selectOption({ label: "a copy of production" });
    await page.getByRole("button", { name: "Make environment" }).click();
    await page.getByText("Environment made.").waitFor();
    assert.equal(await page.getByLabel("Name of preview").inputValue(), "Preview");
    await noViolations(page, "environments after one was made");

    // The page is changed in the copy, in its editor.
    await page.getByLabel("Site and environment").selectOption({ label: "Quire Demo · preview" });
    await page.getByRole("button", { name: "Switch" }).click();
    await page.waitForURL(`${server.base}/`);
    const about = await aboutIn("preview");
    await page.goto(`${server.base}/pages/${about.id}`);
    await page.getByLabel("Name", { exact: true }).fill("About the team");
    await page.getByRole("button", { name: "Save page" }).click();
    await page.waitForLoadState();
    assert.equal((await aboutIn("preview")).name, "About the team");
    assert.equal((await aboutIn("production")).name, "About", "production is untouched");

    await page.goto(`${server.base}/environments`);
    await page.getByRole("link", { name: "Compare and promote" }).click();
    await page.getByLabel("From", { exact: true }).selectOption("preview");
    await page.getByLabel("Into", { exact: true }).selectOption("production");
    await page.getByRole("button", { name: "Compare" }).click();
    await page.getByRole("heading", { name: "1 record(s) differ" }).waitFor();
    await page.getByRole("heading", { name: /page About the team/ }).waitFor();
    const row = page.getByRole("row", { name: /name/ });
    assert.match(await row.innerText(), /About\s+About the team/);
    assert.ok(await page.getByLabel("Promote page “About the team”").isChecked(), "ticked by default");
    await noViolations(page, "the comparison");
    await shot(page, "environments-compare");
    const bytes = await weight(page, "/environments/compare?from=preview&to=production");
    console.log(`comparison with its stylesheet and script: ${bytes} B`);
    assert.ok(bytes < 100 * 1024, `${bytes} B`);

    await page.getByRole("button", { name: "Promote the chosen records into production" }).click();
    await page.getByText("Promoted:").waitFor();
    await page.getByRole("heading", { name: "Nothing differs" }).waitFor();
    assert.equal((await aboutIn("production")).name, "About the team", "production changed");
    await noViolations(page, "the comparison after a promotion");

    await page.getByRole("link", { name: "Undo…" }).click();
    await page.getByRole("heading", { name: /Undo the promotion from preview into production/ }).waitFor();
    await noViolations(page, "the question before undoing");
    assert.equal((await aboutIn("production")).name, "About the team", "asking changed nothing");
    await page.getByRole("button", { name: "Undo the promotion" }).click();
    await page.getByText("Undone:").waitFor();
    assert.equal((await aboutIn("production")).name, "About", "production is back");
    await noViolations(page, "the comparison after an undo");
    await page.context().close();
  });

  test("a conflict is refused with its reason until a side is chosen", async () => {
    const page = await signedIn(browser, server, ADMIN, PASSWORD);
    const live = await aboutIn("production");
    await inEnv("production", "PATCH", `/api/v1/pages/${live.id}`, { name: "About (live)" });
    await page.goto(`${server.base}/environments/compare?from=preview&to=production`);
    await page.getByText("conflict", { exact: true }).first().waitFor();
    await page.getByRole("button", { name: "Promote the chosen records into production" }).click();
    const refusal = page.locator("#promote-error");
    await refusal.waitFor();
    assert.match(await refusal.innerText(), /nothing was promoted: 1 conflict to resolve: page “About the team” changed in both/);
    assert.equal((await aboutIn("production")).name, "About (live)", "nothing was applied");
    await noViolations(page, "a refused promotion");

    await page.getByLabel("Take preview's copy").check();
    await page.getByRole("button", { name: "Promote the chosen records into production" }).click();
    await page.getByText("Promoted:").waitFor();
    assert.equal((await aboutIn("production")).name, "About the team");
    await page.context().close();
  });
});

describe("webhooks", () => {
  test("a subscription shows its secret once, then its delivery log", async () => {
    const page = await signedIn(browser, server, ADMIN, PASSWORD);
    await page.getByRole("link", { name: "Webhooks" }).click();
    await noViolations(page, "webhooks");
    await page.getByLabel("Address (https://…)").fill("https://hooks.example.com/build");
    await page.getByLabel("published", { exact: true }).check();
    await page.getByLabel("page", { exact: true }).check();
    await page.getByLabel("What it is for (optional)").fill("Rebuild the site");
    await page.getByRole("button", { name: "Subscribe" }).click();
    const secret = await page.locator("#new-secret").innerText();
    assert.match(secret, /^whsec_[A-Za-z0-9+/=]+$/);
    await noViolations(page, "webhooks with a new secret");
    const hooks = await api(server, "GET", "/api/v1/webhooks");
    assert.deepEqual([hooks.body.items[0].events, hooks.body.items[0].kinds], [["published"], ["page"]]);

    await page.goto(`${server.base}/webhooks`);
    assert.equal(await page.locator("#new-secret").count(), 0);
    assert.ok(!(await page.content()).includes(secret), "the secret is not shown again");
    await page.getByRole("link", { name: "https://hooks.example.com/build" }).click();
    await page.getByRole("heading", { name: "Deliveries" }).waitFor();
    assert.ok(!(await page.content()).includes(secret));
    await noViolations(page, "a subscription and its delivery log");
    const bytes = await weight(page, new URL(page.url()).pathname);
    console.log(`subscription with its stylesheet and script: ${bytes} B`);
    assert.ok(bytes < 100 * 1024, `${bytes} B`);
    await page.getByRole("link", { name: "Archive…" }).click();
    await noViolations(page, "the question before archiving a subscription");
    await page.context().close();
  });
});

describe("sites", () => {
  test("the instance's administrator makes a site", async () => {
    const page = await signedIn(browser, server, ADMIN, PASSWORD);
    await page.getByRole("link", { name: "Sites" }).click();
    await noViolations(page, "sites");
    await page.getByLabel("Slug").fill("shop");
    await page.getByLabel("Name", { exact: true }).fill("The shop");
    await page.getByRole("button", { name: "Make site" }).click();
    await page.getByText("Site made.").waitFor();
    assert.equal(await page.getByLabel("Name of shop").inputValue(), "The shop");
    await noViolations(page, "sites after one was made");
    const bytes = await weight(page, "/sites");
    console.log(`sites with its stylesheet and script: ${bytes} B`);
    await page.context().close();
  });
});

describe("people", () => {
  test("an administrator invites a viewer, who signs in with the link and is offered nothing that writes; then is disabled", async () => {
    const page = await signedIn(browser, server, ADMIN, PASSWORD);
    await page.getByRole("link", { name: "People" }).click();
    await noViolations(page, "people");
    await page.getByLabel("Email").fill("vi@example.org");
    await page.getByLabel("Name (optional)").fill("Vi Ewer");
    await page.getByLabel("Group", { exact: true }).selectOption("viewer");
    for (const box of await page.locator('form[action="/users"] input[name="env"]:not([value="production"])').all()) {
      await box.uncheck();
    }
    await page.getByRole("button", { name: "Invite" }).click();
    const link = (await page.locator("#new-link").textContent()).trim();
    assert.match(link, /^http:\/\/.+\/sign-in\/link\/ql_/);
    await noViolations(page, "people with a sign-in link shown");
    await shot(page, "people");
    const row = page.getByRole("row").filter({ hasText: "vi@example.org" });
    assert.match(await row.textContent(), /invited/);
    assert.match(await row.textContent(), /never/);

    // The invited person follows the link, chooses a password and is in.
    const theirs = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const vi = await theirs.newPage();
    await vi.goto(link);
    await vi.getByLabel("New password").fill("vi's long password");
    await vi.getByLabel("Repeat it").fill("vi's long password");
    await vi.getByRole("button", { name: "Set password and sign in" }).click();
    await vi.waitForURL(`${server.base}/`);
    // A viewer: production alone, no People, no write control, no agent that writes.
    const places = await vi.locator("#place option").allTextContents();
    assert.ok(places.length === 1 && /production/.test(places[0]), places.join(" | "));
    assert.equal(await vi.getByRole("link", { name: "People" }).count(), 0);
    await vi.goto(`${server.base}/pages`);
    assert.equal(await vi.getByRole("button", { name: "Create page" }).count(), 0);
    await vi.getByRole("link", { name: "Home" }).click();
    assert.equal(await vi.getByRole("button", { name: "Save page" }).count(), 0);
    const actions = await vi.locator("[data-ai-action]").evaluateAll((els) => els.map((e) => e.dataset.aiAction));
    assert.deepEqual(actions, ["summarize"]);
    const agents = await vi.evaluate(async () => (await (await fetch("/api/v1/agents")).json()).items.map((a) => a.alias));
    assert.ok(!agents.includes("editor"), agents.join(", "));
    assert.ok(agents.includes("researcher"), agents.join(", "));

    // Their first sign-in is shown; their group changes from the row.
    await page.goto(`${server.base}/users`);
    assert.doesNotMatch(await row.textContent(), /never/);
    assert.match(await row.textContent(), /active/);
    await page.getByLabel("Group of Vi Ewer").selectOption("author");
    await row.getByRole("button", { name: "Save the access of Vi Ewer" }).click();
    await page.getByText("Saved.").waitFor();
    assert.equal(await page.getByLabel("Group of Vi Ewer").inputValue(), "author");
    await vi.reload();
    assert.deepEqual(
      await vi.locator("[data-ai-action]").evaluateAll((els) => els.map((e) => e.dataset.aiAction)),
      ["summarize", "improve", "translate", "translate-missing"],
    );

    // Disabling asks first, then ends their session at once.
    await page.getByRole("link", { name: "Disable Vi Ewer…" }).click();
    await noViolations(page, "the question before disabling a person");
    await page.getByRole("button", { name: "Disable", exact: true }).click();
    await page.getByText("Disabled:").waitFor();
    assert.match(await row.textContent(), /disabled/);
    await vi.goto(`${server.base}/pages`);
    assert.match(vi.url(), /\/sign-in/);
    // Nobody disables themselves: their own row offers nothing.
    const mine = page.getByRole("row").filter({ hasText: ADMIN });
    assert.equal(await mine.getByRole("link").count(), 0);
    await theirs.close();
    await page.context().close();
  });

  test("a token limited to one environment, and its last use shown", async () => {
    const page = await signedIn(browser, server, ADMIN, PASSWORD);
    await page.getByRole("link", { name: "API tokens" }).click();
    await page.getByLabel("Name").fill("staging only");
    await page.locator('input[name="env"][value="production"]').uncheck();
    await page.getByRole("button", { name: "Create token" }).click();
    const secret = (await page.locator("#new-secret").textContent()).trim();
    const row = page.getByRole("row").filter({ hasText: "staging only" });
    assert.match(await row.textContent(), /staging/);
    assert.doesNotMatch(await row.textContent(), /production/);
    const lastUse = row.locator("td").nth(5);
    assert.equal((await lastUse.textContent()).trim(), "never");
    await noViolations(page, "tokens with a limited one");
    const me = async (env) =>
      (await fetch(`${server.base}/api/v1/me`, { headers: { authorization: `Bearer ${secret}`, "x-quire-env": env } })).status;
    assert.equal(await me("staging"), 200);
    assert.equal(await me("production"), 403);
    let used = false;
    for (let i = 0; i < 20 && !used; i++) {
      await page.goto(`${server.base}/tokens`);
      used = (await lastUse.textContent()).trim() !== "never";
      if (!used) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(used, "the token's use is shown");
    await page.context().close();
  });
});

describe("translations", () => {
  test("a page is translated side by side, saved as a draft, refused with its reason, then published", async () => {
    const page = await signedIn(browser, server, ADMIN, PASSWORD);
    const about = (await api(server, "GET", "/api/v1/pages?limit=100")).body.items.find((p) => p.slug === "pricing");
    await page.goto(`${server.base}/pages/${about.id}`);
    const languages = page.getByRole("navigation", { name: "Languages" });
    assert.match(await languages.textContent(), /German\s+missing/);
    await languages.getByRole("link", { name: "German" }).click();
    await page.getByRole("heading", { name: `${about.name} in German` }).waitFor();
    assert.ok((await page.getByText("not translated").count()) >= 2, "the untranslated values are marked");
    // The English text is shown beside each input.
    const nameRow = page.getByRole("row").filter({ has: page.getByLabel("Name", { exact: true }) });
    assert.ok((await nameRow.textContent()).includes(about.name));
    await noViolations(page, "a page's German translation, side by side");
    await shot(page, "translation");

    // A slug the rules refuse is named, and nothing is written.
    await page.getByLabel("Name", { exact: true }).fill("Preise");
    await page.getByLabel("Slug", { exact: true }).fill("Preise!");
    await page.getByRole("button", { name: "Save draft translation" }).click();
    await page.locator("#translation-error").waitFor();
    assert.match(await page.locator("#translation-error").textContent(), /slug/);
    assert.equal(await page.getByLabel("Name", { exact: true }).inputValue(), "Preise", "what was typed stays");
    let listed = await api(server, "GET", `/api/v1/pages/${about.id}/translations`);
    assert.ok(!listed.body.translations.some((t) => t.translation.locale === "de"), JSON.stringify(listed.body));
    await noViolations(page, "a refused translation");

    // A draft: the page's own text stays, and delivery in German does not move.
    await page.getByLabel("Slug", { exact: true }).fill("preise");
    await page.getByRole("button", { name: "Save draft translation" }).click();
    await page.getByText("Saved as a draft translation").waitFor();
    listed = await api(server, "GET", `/api/v1/pages/${about.id}/translations`);
    const german = listed.body.translations.find((t) => t.translation.locale === "de");
    assert.equal(german.translation.fields.name, "Preise");
    assert.equal(german.published, false);
    assert.equal((await api(server, "GET", `/api/v1/pages/${about.id}`)).body.name, about.name);
    const delivered = async () => (await fetch(`${server.base}/api/v1/delivery/pages/pricing?locale=de`)).json();
    assert.equal((await delivered()).name, about.name);
    assert.match(await languages.textContent(), /German\s+draft/);

    // Published: readers of German get it.
    await page.getByRole("button", { name: "Save and publish" }).click();
    await page.getByText("Saved and published").waitFor();
    assert.equal((await delivered()).name, "Preise");
    assert.match(await languages.textContent(), /German\s+published/);

    // The lists show what is not translated yet: this page no longer, Home (translated in the demo) never.
    await page.goto(`${server.base}/pages`);
    await page.getByLabel("Not translated into").selectOption({ label: "German" });
    await page.getByRole("button", { name: "Show" }).click();
    await page.getByRole("heading", { name: "Pages not translated into German" }).waitFor();
    const names = await page.locator("tbody tr td a[href^='/pages/']").allTextContents();
    assert.ok(names.includes("Contact") && !names.includes(about.name) && !names.includes("Home"), names.join(", "));
    await noViolations(page, "pages not translated into German");
    const rest = await api(server, "GET", "/api/v1/pages?missingLocale=de&limit=100");
    assert.deepEqual(rest.body.items.map((p) => p.slug).sort(), (await page.locator("tbody tr td code").allTextContents()).sort());
    await page.goto(`${server.base}/collections/blog?missing=de`);
    assert.ok((await page.locator("tbody tr").count()) > 0);
    await noViolations(page, "posts not translated into German");
    await page.context().close();
  });
});
