// The back-office in a real browser: signing in and out, the page screens
// and their generated section forms, validation errors next to their
// fields, escaping, a viewer's refused writes, CSRF, disabled users, and
// axe-core on the main screens. Screenshots of the main screens are written
// to docs/screenshots when SCREENSHOTS=1.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { api, chooseAdminPassword, launch, noSeriousViolations, noViolations, quire, shot, signIn, signedIn, startServer } from "./harness.mjs";

const ADMIN = "admin@localhost";
const PASSWORD = "a long admin password";

let server;
let browser;

before(async () => {
  server = await startServer();
  browser = await launch();
  // The first start's one-time link: choose the admin's password.
  await chooseAdminPassword(browser, server, PASSWORD);
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

async function adminPage() {
  return signedIn(browser, server, ADMIN, PASSWORD);
}

describe("signing in", () => {
  test("a used link is refused, a wrong password is told, and sign-out ends the session", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    // The first start's link was used in before().
    await page.goto(server.link);
    await page.getByLabel("New password").fill("another long password");
    await page.getByLabel("Repeat it").fill("another long password");
    await page.getByRole("button", { name: "Set password and sign in" }).click();
    await page.getByText("This sign-in link has been used or has expired").waitFor();

    await page.goto(`${server.base}/pages`);
    assert.match(page.url(), /\/sign-in\?next=%2Fpages$/, "signed out: sent to the sign-in form");
    await signIn(page, server.base, ADMIN, "not the password");
    await page.getByText("The email or password is not right.").waitFor();

    await signIn(page, server.base, ADMIN, PASSWORD);
    await page.waitForURL(`${server.base}/`);
    await page.goto(`${server.base}/pages`);
    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === "quire_session");
    assert.ok(session, "a session cookie");
    assert.equal(session.httpOnly, true);
    assert.equal(session.sameSite, "Lax");
    await shot(page, "pages");

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByText("You are signed out.").waitFor();
    // The old cookie no longer works, even if it were replayed.
    const replay = await fetch(`${server.base}/api/v1/me`, { headers: { cookie: `quire_session=${session.value}` } });
    assert.equal(replay.status, 401);
    await context.close();
  });

  test("the sign-in form is throttled after repeated failures", async () => {
    const email = "throttled@example.org";
    quire(server.data, ["user", "create", "--email", email, "--group", "viewer", "--password-stdin"], "right password 1\n");
    const context = await browser.newContext();
    const page = await context.newPage();
    for (let i = 0; i < 5; i++) {
      await signIn(page, server.base, email, `wrong password ${i}`);
      await page.getByText("The email or password is not right.").waitFor();
    }
    await signIn(page, server.base, email, "right password 1");
    await page.getByText(/Too many failed sign-ins for this email; try again in \d+ s\./).waitFor();
    await context.close();
  });
});

describe("pages", () => {
  test("create a page, add a hero through its form, publish, and read it from the delivery API", async () => {
    const page = await adminPage();
    await page.getByLabel("Name").fill("Spring sale");
    assert.equal(await page.getByLabel("Slug").inputValue(), "spring-sale", "the slug follows the name");
    await page.getByLabel("Status").selectOption("published");
    await page.getByRole("button", { name: "Create page" }).click();
    await page.getByRole("heading", { name: /Spring sale/ }).waitFor();
    await noSeriousViolations(page, "page editor");

    await page.getByLabel("Add a section").selectOption("hero");
    await page.getByRole("button", { name: "Add", exact: true }).click();
    await page.getByRole("heading", { name: /New Hero/ }).waitFor();
    await noSeriousViolations(page, "section form");
    await page.getByLabel(/^Heading\b/).fill("Everything half price");
    await page.getByLabel("Subheading").fill("Until Sunday");
    await page.getByLabel("Label").fill("Shop now");
    await page.getByLabel("Address (/path, #anchor, https://…)").fill("/shop");
    await page.getByLabel("Status").selectOption("published");
    await shot(page, "section-form");
    await page.getByRole("button", { name: "Add section" }).click();
    await page.getByText("Saved.").waitFor();
    await page.getByText("Everything half price").waitFor();
    await shot(page, "page-editor");

    // The section is a change of the page's draft: the public page shows it
    // once the page is published.
    const draft = await api(server, "GET", "/api/v1/delivery/pages/spring-sale");
    assert.equal(draft.body.sections.length, 0, "the new section waits for the page to be published");
    await page.getByText("published, with changes not published yet").waitFor();
    // The preview link shows the draft, the new section with it, to the signed-in editor.
    const preview = await page.getByRole("link", { name: "Preview the draft" }).getAttribute("href");
    const previewed = await page.evaluate(async (url) => (await fetch(url)).json(), preview);
    assert.ok(previewed.sections.some((s) => s.content.heading === "Everything half price"), JSON.stringify(previewed));
    await page.getByRole("button", { name: "Publish", exact: true }).click();
    await page.getByText("Published.", { exact: true }).waitFor();
    await noSeriousViolations(page, "page editor after publishing");

    const delivered = await api(server, "GET", "/api/v1/delivery/pages/spring-sale");
    assert.equal(delivered.status, 200, JSON.stringify(delivered.body));
    const hero = delivered.body.sections.find((s) => s.templateKey === "hero");
    assert.deepEqual(hero.content, {
      heading: "Everything half price",
      subheading: "Until Sunday",
      cta: { label: "Shop now", href: "/shop" },
    });

    // The change log says who made it, and through which surface.
    const changes = await api(server, "GET", "/api/v1/changes?entity=section");
    const made = changes.body.items.find((c) => c.after?.content?.heading === "Everything half price");
    assert.ok(made, "the section's creation is logged");
    assert.equal(made.surface, "web");
    assert.match(made.actor, /^user:/);
    await page.context().close();
  });

  test("leaving a form with unsaved changes asks first, and saving it does not", async () => {
    const icon = await fetch(`${server.base}/favicon.ico`);
    assert.equal(icon.status, 200);
    assert.equal(icon.headers.get("content-type"), "image/svg+xml");
    const page = await adminPage();
    const pages = (await api(server, "GET", "/api/v1/pages?limit=100")).body.items;
    const contact = pages.find((p) => p.slug === "contact");
    await page.goto(`${server.base}/pages/${contact.id}`);
    await page.getByLabel("Meta title").pressSequentially("Write to us");
    const asked = new Promise((resolve) => page.once("dialog", (d) => { resolve(d.type()); d.dismiss(); }));
    await page.getByRole("link", { name: "Pages", exact: true }).first().click({ noWaitAfter: true });
    assert.equal(await asked, "beforeunload");
    assert.equal(new URL(page.url()).pathname, `/pages/${contact.id}`, "the person stayed, with their edit");
    let dialogs = 0;
    page.on("dialog", (d) => { dialogs += 1; d.accept(); });
    await page.getByRole("button", { name: "Save page" }).click();
    await page.getByText("Saved.").waitFor();
    assert.equal(dialogs, 0, "saving asks nothing");
    await page.context().close();
  });

  test("a page's draft saves itself after typing stops, without publishing, and leaving then asks nothing", async () => {
    const made = await api(server, "POST", "/api/v1/pages", { name: "Autosaved", slug: "autosaved", meta: { title: "As published" } });
    assert.equal((await api(server, "POST", `/api/v1/pages/${made.body.id}/publish`)).status, 200);
    const page = await adminPage();
    await page.goto(`${server.base}/pages/${made.body.id}`);
    await page.getByLabel("Meta title").fill("");
    await page.getByLabel("Meta title").pressSequentially("Written, not yet published");
    const status = page.locator("form[data-autosave] [role=status]");
    assert.equal(await status.getAttribute("aria-live"), "polite");
    await status.getByText(/^Draft saved at \d\d:\d\d$/).waitFor({ timeout: 10_000 });
    await page.getByText("published, with changes not published yet").waitFor();

    const stored = await api(server, "GET", `/api/v1/pages/${made.body.id}`);
    assert.equal(stored.body.meta.title, "Written, not yet published", "the draft holds the edit");
    assert.equal(await page.locator("[data-version]").innerText(), String(stored.body.version), "the screen shows the version saved");
    const delivered = await api(server, "GET", "/api/v1/delivery/pages/autosaved");
    assert.equal(delivered.body.meta.title, "As published", "the site still shows what was published");

    // Saved: leaving asks nothing, and the value is there on return.
    let dialogs = 0;
    page.on("dialog", (d) => { dialogs += 1; d.dismiss(); });
    await page.getByRole("link", { name: "Pages", exact: true }).first().click();
    await page.waitForURL(`${server.base}/pages`);
    assert.equal(dialogs, 0, "no leave-page warning after the autosave");
    await page.goto(`${server.base}/pages/${made.body.id}`);
    assert.equal(await page.getByLabel("Meta title").inputValue(), "Written, not yet published");

    // The autosave took up the new version: a save by hand after it is not refused as stale.
    await page.getByLabel("Meta description").fill("Typed after an autosave");
    await status.getByText(/^Draft saved at/).waitFor({ timeout: 10_000 });
    await page.getByLabel("Meta title").fill("Saved by hand");
    await page.getByRole("button", { name: "Save page" }).click();
    await page.getByText("Saved.").waitFor();
    const after = await api(server, "GET", `/api/v1/pages/${made.body.id}`);
    assert.equal(after.body.meta.title, "Saved by hand");
    assert.equal(after.body.meta.description, "Typed after an autosave");
    assert.equal((await api(server, "GET", "/api/v1/delivery/pages/autosaved")).body.meta.title, "As published");
    await page.context().close();
  });

  test("the server's validation errors appear next to the fields they name, and nothing is saved", async () => {
    const page = await adminPage();
    await page.getByLabel("Name").fill("About us");
    await page.getByRole("button", { name: "Create page" }).click();
    await page.getByRole("heading", { name: /About us/ }).waitFor();
    const before = await api(server, "GET", "/api/v1/changes?entity=section");

    await page.getByLabel("Add a section").selectOption("hero");
    await page.getByRole("button", { name: "Add", exact: true }).click();
    await page.getByLabel("Subheading").fill("No heading given");
    await page.getByLabel("Address (/path, #anchor, https://…)").fill("javascript:alert(1)");
    await page.getByRole("button", { name: "Add section" }).click();

    const heading = page.getByLabel(/^Heading\b/);
    assert.equal(await heading.getAttribute("aria-invalid"), "true");
    assert.equal(await page.locator("#e-heading").innerText(), "Heading: required", "the error names the field by its label");
    assert.match(await page.locator('[id="e-cta.href"]').innerText(), /http|relative|path/i);
    assert.equal(await page.getByLabel("Subheading").inputValue(), "No heading given", "what was typed is kept");
    const after = await api(server, "GET", "/api/v1/changes?entity=section");
    assert.equal(after.body.items.length, before.body.items.length, "nothing was written");

    // A slug that is taken is named on the page form.
    await page.goto(`${server.base}/pages`);
    await page.getByLabel("Name").fill("Another about");
    await page.getByLabel("Slug").fill("about-us");
    await page.getByRole("button", { name: "Create page" }).click();
    assert.match(await page.locator("#e-slug").innerText(), /about-us/);
    await page.context().close();
  });

  test("a form opened before someone else's change refuses to overwrite it", async () => {
    const page = await adminPage();
    await page.getByLabel("Name").fill("Contested");
    await page.getByRole("button", { name: "Create page" }).click();
    await page.getByRole("heading", { name: /Contested/ }).waitFor();
    const id = page.url().split("/pages/")[1];
    await api(server, "PATCH", `/api/v1/pages/${id}`, { name: "Changed elsewhere" });
    await page.getByLabel("Name", { exact: true }).fill("My edit");
    await page.getByRole("button", { name: "Save page" }).click();
    await page.getByText(/it changed since you opened it \(you edited version 1, it is now at 2\)/).waitFor();
    assert.equal((await api(server, "GET", `/api/v1/pages/${id}`)).body.name, "Changed elsewhere");
    await page.context().close();
  });

  test("a script in a page's name is shown as text and never runs", async () => {
    const page = await adminPage();
    let dialogs = 0;
    page.on("dialog", async (d) => { dialogs++; await d.dismiss(); });
    const payload = `<script>alert("x")</script><img src=x onerror=alert(2)>`;
    await page.getByLabel("Name").fill(payload);
    await page.getByLabel("Slug").fill("xss-check");
    await page.getByRole("button", { name: "Create page" }).click();
    await page.getByRole("heading", { name: payload }).waitFor();
    await page.goto(`${server.base}/pages`);
    await page.getByRole("link", { name: payload }).waitFor();
    assert.equal(await page.locator("main img").count(), 0, "no element was made from the name");
    assert.equal(dialogs, 0, "no script ran");
    await page.context().close();
  });

  test("a markdown field previews its text, and markup typed into it stays text", async () => {
    const page = await adminPage();
    await page.getByLabel("Name").fill("Preview check");
    await page.getByRole("button", { name: "Create page" }).click();
    await page.getByLabel("Add a section").selectOption("text");
    await page.getByRole("button", { name: "Add", exact: true }).click();
    let dialogs = 0;
    page.on("dialog", async (d) => { dialogs++; await d.dismiss(); });
    await page.getByLabel(/^Body/).fill("# Title\n\nSome **bold** and a [link](/about), not [elsewhere](//evil.example/x).\n\n- one\n- two\n\n<img src=x onerror=alert(1)>");
    await page.getByRole("button", { name: "Preview" }).click();
    const preview = page.getByRole("region", { name: "Preview" });
    assert.equal(await preview.locator("h1").innerText(), "Title");
    assert.equal(await preview.locator("strong").innerText(), "bold");
    assert.equal(await preview.locator("a").getAttribute("href"), "/about");
    // The server renders the preview: a protocol-relative link is its text alone, as the server's rule of links says.
    assert.equal(await preview.locator("a").count(), 1);
    assert.match(await preview.innerText(), /not elsewhere\./);
    assert.equal(await preview.locator("li").count(), 2);
    assert.equal(await preview.locator("img").count(), 0);
    assert.match(await preview.innerText(), /<img src=x onerror=alert\(1\)>/);
    assert.equal(dialogs, 0);
    await page.context().close();
  });

  test("list fields add, reorder and remove items in place", async () => {
    const page = await adminPage();
    await page.getByLabel("Name").fill("Questions");
    await page.getByRole("button", { name: "Create page" }).click();
    await page.getByLabel("Add a section").selectOption("faq");
    await page.getByRole("button", { name: "Add", exact: true }).click();
    const items = page.locator("ol.items > li.item");
    await items.nth(0).getByLabel("Question").fill("First?");
    await items.nth(0).getByLabel("Answer").fill("One.");
    await page.getByRole("button", { name: "Add item" }).click();
    await items.nth(1).getByLabel("Question").fill("Second?");
    await items.nth(1).getByLabel("Answer").fill("Two.");
    await page.getByRole("button", { name: "Add item" }).click();
    await items.nth(2).getByLabel("Question").fill("Third?");
    await items.nth(2).getByLabel("Answer").fill("Three.");
    await items.nth(2).getByRole("button", { name: "Move up" }).click();
    await items.nth(0).getByRole("button", { name: "Remove" }).click();
    await page.getByRole("button", { name: "Add section" }).click();
    await page.getByText("Saved.").waitFor();
    const sections = await api(server, "GET", `/api/v1/pages/${page.url().split("/pages/")[1].split("?")[0]}/sections`);
    const faq = sections.body.items.find((s) => s.templateKey === "faq");
    assert.deepEqual(faq.content.items.map((i) => i.question), ["Third?", "Second?"]);
    await page.context().close();
  });
});

describe("who may do what", () => {
  test("a viewer sees no write controls, and a write forced by hand is refused", async () => {
    quire(server.data, ["user", "create", "--email", "vera@example.org", "--group", "viewer", "--password-stdin"], "viewer password 1\n");
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, server.base, "vera@example.org", "viewer password 1");
    await page.waitForURL(`${server.base}/`);
    await page.goto(`${server.base}/pages`);
    assert.equal(await page.getByRole("button", { name: "Create page" }).count(), 0);
    await page.getByRole("link", { name: "Home" }).click();
    assert.equal(await page.getByRole("button", { name: "Save page" }).count(), 0);
    const home = page.url().split("/pages/")[1];

    // Forced: the form post and the REST call, both with the right CSRF token.
    const csrf = await page.locator('meta[name="csrf-token"]').getAttribute("content");
    const forced = await page.evaluate(async ({ home, csrf }) => {
      const form = await fetch(`/pages/${home}`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ _csrf: csrf, name: "Hacked", slug: "home", status: "draft" }),
      });
      const rest = await fetch(`/api/v1/pages/${home}`, {
        method: "PATCH",
        headers: { "content-type": "application/json", "x-csrf-token": csrf },
        body: JSON.stringify({ name: "Hacked" }),
      });
      return { form: form.status, rest: rest.status, restBody: await rest.json() };
    }, { home, csrf });
    assert.equal(forced.form, 403);
    assert.equal(forced.rest, 403);
    assert.match(forced.restBody.error, /viewer may not/);
    const stored = await api(server, "GET", `/api/v1/pages/${home}`);
    assert.equal(stored.body.name, "Home");
    await context.close();
  });

  test("a state-changing request without the session's CSRF token is refused", async () => {
    const page = await adminPage();
    const status = await page.evaluate(async () => {
      const form = await fetch("/pages", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ name: "No token", slug: "no-token" }),
      });
      const rest = await fetch("/api/v1/pages", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "No token", slug: "no-token" }),
      });
      return [form.status, rest.status];
    });
    assert.deepEqual(status, [403, 403]);
    assert.equal((await api(server, "GET", "/api/v1/delivery/pages/no-token")).status, 404);
    await page.context().close();
  });

  test("a disabled user's sessions end at once", async () => {
    quire(server.data, ["user", "create", "--email", "dora@example.org", "--group", "editor", "--password-stdin"], "editor password 1\n");
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, server.base, "dora@example.org", "editor password 1");
    await page.waitForURL(`${server.base}/`);
    await page.goto(`${server.base}/pages`);
    quire(server.data, ["user", "disable", "dora@example.org"]);
    await page.goto(`${server.base}/pages`);
    assert.match(page.url(), /\/sign-in/);
    await signIn(page, server.base, "dora@example.org", "editor password 1");
    await page.getByText("The email or password is not right.").waitFor();
    await context.close();
  });

  test("switching environment is explicit and the header always shows it", async () => {
    const page = await adminPage();
    assert.equal(await page.locator(".env").innerText(), "production");
    await page.getByLabel("Site and environment").selectOption({ label: "Quire Demo · staging" });
    await page.getByRole("button", { name: "Switch" }).click();
    await page.waitForURL(`${server.base}/`);
    await page.goto(`${server.base}/pages`);
    assert.equal(await page.locator(".env").innerText(), "staging");
    await page.context().close();
  });
});

describe("history", () => {
  test("a change shows its before and after, and restoring a revision brings the old state back", async () => {
    const page = await adminPage();
    await page.getByLabel("Name").fill("Versioned");
    await page.getByRole("button", { name: "Create page" }).click();
    await page.getByRole("heading", { name: /Versioned/ }).waitFor();
    const id = page.url().split("/pages/")[1];
    await page.getByLabel("Name", { exact: true }).fill("Versioned twice");
    await page.getByRole("button", { name: "Save page" }).click();
    await page.getByText("Saved.").waitFor();

    // The editor links to the page's history, which names it.
    await page.getByRole("link", { name: "History of this page" }).click();
    await page.getByRole("heading", { name: "History of the page “Versioned twice”" }).waitFor();
    await page.getByLabel("Through").selectOption("web");
    await page.getByRole("button", { name: "Filter" }).click();
    const rows = page.locator("table.list tbody tr");
    assert.equal(await rows.count(), 2, "the creation and the rename");
    assert.match(await rows.nth(0).locator("td").nth(1).innerText(), /^update\s+name$/, "the rename names the field it changed");
    assert.equal(await rows.nth(1).locator("td").nth(1).innerText(), "create");
    await noSeriousViolations(page, "history");
    await shot(page, "history");
    // The record by its name, with a link; the person by their name.
    assert.equal(await rows.nth(0).getByRole("link", { name: "Versioned twice" }).getAttribute("href"), `/pages/${id}`);
    assert.match(await rows.nth(0).locator("td").nth(3).innerText(), /\(you\)$/);
    await rows.nth(0).getByRole("link").first().click();
    const name = page.locator("table.diff tr", { has: page.getByRole("rowheader", { name: "name" }) });
    assert.equal(await name.locator("pre.before").innerText(), "Versioned");
    assert.equal(await name.locator("pre.after").innerText(), "Versioned twice");
    await noSeriousViolations(page, "a change");
    await shot(page, "change");

    await page.goBack();
    await rows.nth(1).getByRole("link").first().click();
    await page.getByRole("button", { name: "Restore the record as this change left it…" }).click();
    // Asked first, on a screen of its own that works without the script.
    await page.getByRole("heading", { name: /^Restore the page Versioned twice as it was after the change of/ }).waitFor();
    assert.equal((await api(server, "GET", `/api/v1/pages/${id}`)).body.name, "Versioned twice", "asking changes nothing");
    await noViolations(page, "restoring a revision, asked");
    await page.getByRole("button", { name: "Restore this revision" }).click();
    await page.getByRole("heading", { name: /^restore|^update|^revert/i }).waitFor();
    const stored = await api(server, "GET", `/api/v1/pages/${id}`);
    assert.equal(stored.body.name, "Versioned");
    await page.context().close();
  });
});

describe("archive", () => {
  test("an archived page lists what went with it; restore refuses a reused slug, then brings it all back", async () => {
    const made = await api(server, "POST", "/api/v1/pages", { name: "Campaign", slug: "campaign" });
    await api(server, "POST", `/api/v1/pages/${made.body.id}/sections`, { templateKey: "text", content: { body: "Sale!" } });
    assert.equal((await api(server, "DELETE", `/api/v1/pages/${made.body.id}`)).status, 200);
    const reuse = await api(server, "POST", "/api/v1/pages", { name: "New campaign", slug: "campaign" });
    const page = await adminPage();
    await page.getByRole("link", { name: "Archive" }).click();
    const card = page.locator("section.archive-item", { hasText: "Campaign" }).first();
    await card.waitFor();
    assert.equal(await card.locator("ul li").count(), 1, "the page's one section went with it");
    assert.match(await card.locator("ul li").innerText(), /^section /);
    await noSeriousViolations(page, "archive");
    await shot(page, "archive");
    // Restoring asks first, on a screen of its own.
    await card.getByRole("button", { name: /^Restore/ }).click();
    await page.getByRole("heading", { name: "Restore the page Campaign and what was archived with it?" }).waitFor();
    assert.match(await page.locator("ul.along").innerText(), /^section /);
    await noViolations(page, "restoring an archive, asked");
    await page.getByRole("button", { name: "Restore the page" }).click();
    assert.match(await page.locator("#restore-error").innerText(), /campaign/);
    assert.equal((await api(server, "GET", `/api/v1/pages/${made.body.id}`)).status, 404, "nothing restored");
    await api(server, "PATCH", `/api/v1/pages/${reuse.body.id}`, { slug: "campaign-2" });
    await page.locator("section.archive-item", { hasText: "Campaign" }).first().getByRole("button", { name: /^Restore/ }).click();
    await page.getByRole("button", { name: "Restore the page" }).click();
    await page.waitForURL(`${server.base}/archive`);
    assert.equal((await api(server, "GET", `/api/v1/pages/${made.body.id}`)).status, 200);
    const sections = await api(server, "GET", `/api/v1/pages/${made.body.id}/sections`);
    assert.equal(sections.body.items.length, 1, "the section came back with its page");
    await page.context().close();
  });
});

describe("approvals and tokens", () => {
  test("the inbox shows a pending call with what it would archive; a rejection's reason reaches the caller", async () => {
    const made = await api(server, "POST", "/api/v1/pages", { name: "Inbox target", slug: "inbox-target" });
    const asked = await api(server, "POST", "/api/v1/tools/deletePage/invoke", { ids: [made.body.id] });
    assert.equal(asked.body.requiresConfirmation, true, JSON.stringify(asked.body));
    const page = await adminPage();
    await page.getByRole("link", { name: "Approvals", exact: true }).click();
    const card = page.locator("section.approval", { hasText: "Inbox target" });
    await card.getByRole("heading", { name: /^Archive the page Inbox target\? asked by/ }).waitFor();
    assert.match(await card.locator("code").innerText(), /^deletePage$/);
    assert.match(await card.locator("pre.args").innerText(), new RegExp(made.body.id));
    await noSeriousViolations(page, "approvals inbox");
    await shot(page, "approvals");
    await card.getByLabel("Reason (if you reject)").fill("still linked from the newsletter");
    await card.getByRole("button", { name: "Reject" }).click();
    await page.getByText("Nothing is waiting for approval.").waitFor();
    const again = await api(server, "POST", "/api/v1/tools/deletePage/invoke", {
      ids: [made.body.id],
      confirmationId: asked.body.confirmationId,
    });
    assert.match(JSON.stringify(again.body), /still linked from the newsletter/);
    assert.equal((await api(server, "GET", `/api/v1/pages/${made.body.id}`)).status, 200, "not archived");
    await page.context().close();
  });

  test("an admin creates a token on its screen, sees the secret once, and a revoked token stops at once", async () => {
    const page = await adminPage();
    await page.getByRole("link", { name: "API tokens" }).click();
    await page.getByLabel("Name").fill("deploy script");
    await page.getByLabel("Expires in days (empty: never)").fill("0");
    await page.getByRole("button", { name: "Create token" }).click();
    assert.match(await page.locator("#token-error").innerText(), /expiresInDays: must be at least 1 day/);
    await page.getByLabel("Name").fill("deploy script");
    await page.getByLabel("Group").selectOption("editor");
    await page.getByLabel("Expires in days (empty: never)").fill("30");
    await page.getByRole("button", { name: "Create token" }).click();
    const secret = await page.locator("#new-secret").innerText();
    assert.match(secret, /^qk_/);
    const me = await fetch(`${server.base}/api/v1/me`, { headers: { authorization: `Bearer ${secret}` } });
    assert.equal(me.status, 200);
    await noSeriousViolations(page, "tokens");
    await shot(page, "tokens");
    await page.goto(`${server.base}/tokens`);
    assert.equal(await page.getByText(secret).count(), 0, "the secret is shown once");
    // Revoking asks first, on a screen of its own: cancelled, the token still works.
    await page.getByRole("button", { name: "Revoke deploy script…" }).click();
    await page.getByRole("heading", { name: "Revoke the API token deploy script?" }).waitFor();
    await noViolations(page, "revoking a token, asked");
    await page.getByRole("link", { name: "Cancel" }).click();
    await page.waitForURL(`${server.base}/tokens`);
    const kept = await fetch(`${server.base}/api/v1/me`, { headers: { authorization: `Bearer ${secret}` } });
    assert.equal(kept.status, 200, "a declined revoke changes nothing");
    await page.getByRole("button", { name: "Revoke deploy script…" }).click();
    await page.getByRole("button", { name: "Revoke the token" }).click();
    await page.waitForURL(`${server.base}/tokens`);
    const after = await fetch(`${server.base}/api/v1/me`, { headers: { authorization: `Bearer ${secret}` } });
    assert.equal(after.status, 401);
    await page.context().close();
  });
});

describe("the pages themselves", () => {
  test("every screen sends a CSP without inline scripts, refuses framing, and passes axe-core", async () => {
    const page = await adminPage();
    const res = await page.goto(`${server.base}/pages`);
    const headers = res.headers();
    assert.match(headers["content-security-policy"], /script-src 'self'/);
    assert.doesNotMatch(headers["content-security-policy"], /unsafe-inline/);
    assert.match(headers["content-security-policy"], /frame-ancestors 'none'/);
    assert.equal(headers["x-frame-options"], "DENY");
    assert.equal(headers["x-content-type-options"], "nosniff");
    await noSeriousViolations(page, "page tree");
    await page.goto(`${server.base}/sign-in`);
    await noSeriousViolations(page, "sign-in form");
    await page.context().close();
  });

  test("every control is reachable with the keyboard", async () => {
    const page = await adminPage();
    await page.keyboard.press("Tab");
    assert.equal(await page.evaluate(() => document.activeElement.textContent), "Skip to content");
    await page.keyboard.press("Enter");
    await page.keyboard.press("Tab");
    const focused = await page.evaluate(() => document.activeElement.closest("main") !== null);
    assert.ok(focused, "after skipping, focus moves into the main content");
    await page.context().close();
  });
});
