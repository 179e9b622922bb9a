// A new editor's day, end to end in a real browser, as one story on one
// server: an administrator invites an editor from People, who chooses a
// password with the one-time link and lands on the dashboard; finds a page
// by the pages list's search and by the search across the site (/ and
// Ctrl+K); makes a child page under it with the parent picker; adds a
// section, drags it into place by its grip and moves another with the
// keys (the order kept through a reload); writes its body with the
// markdown toolbar, pastes an image that goes into the library and the
// text, and sees it in the live preview; archives a section after the
// question and restores it from the Archive after another; a viewer
// invited the same way sees no control that writes and no agent that
// writes; and an agent's turn asks to archive the child page, is approved
// in the sidebar, follows the editor to the dashboard and back, and is
// undone. axe-core finds no violation on any screen or state on the way.
// With SCREENSHOTS=1 the search, the markdown editor and the sidebar's
// approval are written to docs/screenshots.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { deflateSync } from "node:zlib";
import {
  acceptInvitation, api, chooseAdminPassword, invite, launch, noViolations, shot, signedIn, startServer,
} from "./harness.mjs";
import { startFakeModel } from "./fake-model.mjs";

const ADMIN = "admin@localhost";
const PASSWORD = "a long admin password";
const EDITOR = { email: "eda@example.org", name: "Eda Park", password: "eda's own long password" };
const VIEWER = { email: "vic@example.org", name: "Vic Reader", password: "vic's own long password" };

let model;
let server;
let browser;
/** The administrator's page, then the editor's: one each for the whole day. */
let admin;
let editor;
/** What the day makes, for the steps after. */
let team;
let child;
let written;

before(async () => {
  model = await startFakeModel();
  server = await startServer({
    QUIRE_LLM_PROVIDER: "openai",
    QUIRE_LLM_BASE_URL: model.url,
    QUIRE_LLM_MODEL: "scripted",
    QUIRE_LLM_API_KEY: "not-a-real-key",
  });
  browser = await launch();
  await chooseAdminPassword(browser, server, PASSWORD);
  team = (await api(server, "GET", "/api/v1/pages?limit=100")).body.items.find((p) => p.slug === "team");
});

after(async () => {
  await browser?.close();
  await server?.stop();
  await model?.close();
});

/** CRC-32 of `bytes`, as PNG chunks carry it. */
function crc32(bytes) {
  let c = ~0;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}

/** A `width`×`height` PNG shading from one colour to another, left to right. */
function gradientPng(width, height, [from, to]) {
  const chunk = (type, data) => {
    const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
    const out = Buffer.alloc(body.length + 8);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body), body.length + 4);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const row = [0];
  for (let x = 0; x < width; x++) {
    for (let i = 0; i < 3; i++) row.push(Math.round(from[i] + ((to[i] - from[i]) * x) / (width - 1)));
  }
  const pixels = Buffer.from(Array.from({ length: height }, () => row).flat());
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(pixels)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/** The template keys of a page's sections, in the order the server keeps. */
async function sectionOrder(pageId) {
  return (await api(server, "GET", `/api/v1/pages/${pageId}/sections`)).body.items.map((s) => s.templateKey);
}

/** The names of the sections a page's editor lists, in order. */
async function shownSections(page) {
  return page.locator("ol.sections > li[data-name]").evaluateAll((els) => els.map((el) => el.dataset.name));
}

/** The dashboard's panel under heading `name`. */
function panel(page, name) {
  return page.locator("section.panel", { has: page.getByRole("heading", { name, exact: true }) });
}

/** The sidebar's log as a list of its items' kinds, in order. */
async function logKinds(page) {
  return page.locator("#ai-log > li").evaluateAll((items) => items.map((li) =>
    ["ai-user", "ai-assistant", "ai-tool-row", "ai-approval", "ai-after", "ai-note"].find((c) => li.classList.contains(c)) ?? li.className));
}

const live = (page) => page.locator("#sort-live");

describe("a new editor's day", () => {
  test("an administrator invites an editor from People; the editor chooses a password and lands on the dashboard", async () => {
    admin = await signedIn(browser, server, ADMIN, PASSWORD);
    await admin.getByRole("navigation", { name: "Screens" }).getByRole("link", { name: "People" }).click();
    await admin.waitForURL(`${server.base}/users`);
    await noViolations(admin, "People");
    const link = await invite(admin, { ...EDITOR, group: "editor" });
    await noViolations(admin, "People with the editor's sign-in link shown");
    const row = admin.getByRole("row").filter({ hasText: EDITOR.email });
    assert.match(await row.textContent(), /invited/);
    assert.equal(await admin.getByLabel(`Group of ${EDITOR.name}`).inputValue(), "editor");

    editor = await acceptInvitation(browser, link, EDITOR.password, {
      viewport: { width: 1400, height: 900 },
      onForm: (page) => noViolations(page, "choosing a password with the one-time link"),
    });
    await editor.getByRole("heading", { name: "Dashboard", exact: true }).waitFor();
    assert.equal((await editor.locator(".who").innerText()).replace(/\s+/g, " "), `${EDITOR.name} (editor)`);
    // What waits for a person, what is not on the site, what changed.
    assert.equal(await panel(editor, "Waiting for approval").locator(".empty").innerText(), "Nothing is waiting for a person.");
    const drafts = panel(editor, "Drafts not on the site");
    const roadmap = (await api(server, "GET", "/api/v1/collections/blog/entries?limit=100")).body.items.find((e) => e.slug === "roadmap-draft");
    assert.equal(roadmap.status, "draft");
    assert.equal(await drafts.getByRole("link", { name: roadmap.title, exact: true }).getAttribute("href"), `/entries/${roadmap.id}`);
    assert.match(await drafts.innerText(), new RegExp(`entry ${roadmap.title.replace(/[()]/g, "\\$&")} never published`));
    assert.equal(await panel(editor, "My recent changes").locator(".empty").innerText(), "You have changed nothing yet.");
    const everyone = panel(editor, "Everyone's recent changes");
    assert.ok((await everyone.locator("ul.changes > li").count()) > 0, "the site's changes so far");
    assert.equal(await everyone.getByRole("link", { name: "All of History" }).getAttribute("href"), "/history");
    await noViolations(editor, "the new editor's dashboard");

    // Their first sign-in shows on the administrator's People screen.
    await admin.reload();
    assert.match(await row.textContent(), /active/);
    assert.doesNotMatch(await row.textContent(), /never/);
  });

  test("the editor finds a page by the pages list's search and by the search across the site, and opens it", async () => {
    await editor.getByRole("navigation", { name: "Screens" }).getByRole("link", { name: "Pages", exact: true }).click();
    await editor.waitForURL(`${server.base}/pages`);
    await noViolations(editor, "the page tree");
    await editor.getByLabel("Find pages").fill("people");
    await editor.getByRole("button", { name: "Find", exact: true }).click();
    await editor.getByRole("heading", { name: "Pages matching “people”" }).waitFor();
    assert.deepEqual(await editor.locator("table.list tbody tr[data-name]").evaluateAll((rows) => rows.map((r) => r.dataset.name)), ["Our team"]);
    await noViolations(editor, "pages found by the list's search");

    // `/` puts the cursor in the header's search; leaving it, Ctrl+K does too.
    await editor.locator("h1").click();
    await editor.keyboard.press("/");
    assert.equal(await editor.evaluate(() => document.activeElement.id), "find-q");
    await editor.locator("h1").click();
    assert.notEqual(await editor.evaluate(() => document.activeElement.id), "find-q");
    await editor.keyboard.press("Control+k");
    assert.equal(await editor.evaluate(() => document.activeElement.id), "find-q");
    await editor.keyboard.type("team");
    await editor.keyboard.press("Enter");
    await editor.waitForURL(`${server.base}/search?q=team`);
    const pages = editor.locator("section", { has: editor.getByRole("heading", { name: "Pages", exact: true }) });
    const found = pages.getByRole("link", { name: "Our team" });
    assert.equal(await found.getAttribute("href"), `/pages/${team.id}`);
    await noViolations(editor, "the search across the site");
    // The picture: the results, with the words in the search as they were typed.
    await editor.getByLabel("Find anything: pages, posts, images, notes, screens").fill("team");
    await shot(editor, "editors-day-search");
    await found.click();
    await editor.waitForURL(`${server.base}/pages/${team.id}`);
    await editor.getByRole("heading", { name: /^Our team/ }).waitFor();
    await noViolations(editor, "the page found");
  });

  test("the editor makes a child page with the New page form's parent picker", async () => {
    await editor.getByRole("navigation", { name: "Breadcrumb" }).getByRole("link", { name: "Pages", exact: true }).click();
    await editor.waitForURL(`${server.base}/pages`);
    await editor.getByLabel("Name", { exact: true }).fill("Studio visits");
    assert.equal(await editor.getByLabel("Slug", { exact: true }).inputValue(), "studio-visits");
    const picker = editor.getByLabel("Parent page", { exact: true });
    assert.equal(await picker.inputValue(), "", "a root page unless another is chosen");
    await editor.getByLabel("Search the choices of Parent page").fill("team");
    const shown = await picker.locator("option:not([hidden])").allTextContents();
    assert.ok(shown.includes("\u2003Our team (/team)") && !shown.some((t) => t.startsWith("Pricing")), shown.join(" | "));
    await picker.selectOption({ label: "\u2003Our team (/team)" });
    assert.equal(await picker.inputValue(), team.id);
    await noViolations(editor, "the new page form with its parent picker narrowed");
    await editor.getByRole("button", { name: "Create page" }).click();
    await editor.waitForURL(/\/pages\/[^?]+$/);
    await editor.getByRole("heading", { name: /^Studio visits/ }).waitFor();
    const id = new URL(editor.url()).pathname.split("/")[2];
    child = (await api(server, "GET", `/api/v1/pages/${id}`)).body;
    assert.equal(child.parentId, team.id);
    assert.equal(child.slug, "studio-visits");
    assert.equal(await editor.getByLabel("Parent page", { exact: true }).inputValue(), team.id);
    await editor.locator("nav.crumbs", { hasText: "Our team" }).waitFor();
    await noViolations(editor, "the child page's editor");
  });

  test("the editor adds a section, drags it into place by its grip and moves another with the keys; the order stays", async () => {
    await editor.goto(`${server.base}/pages/${team.id}`);
    assert.deepEqual(await sectionOrder(team.id), ["image-text", "gallery"]);
    await editor.getByLabel("Add a section").selectOption("text");
    await editor.getByRole("button", { name: "Add", exact: true }).click();
    await editor.getByRole("heading", { name: /^New Text/ }).waitFor();
    await editor.getByLabel(/^Heading\b/).fill("Visiting the studio");
    await editor.getByLabel(/^Body/).fill("Come and see us.");
    await noViolations(editor, "a new section's form");
    await editor.getByRole("button", { name: "Add section" }).click();
    await editor.waitForURL(new RegExp(`/pages/${team.id}`));
    await editor.getByText("Saved.").waitFor();
    assert.deepEqual(await sectionOrder(team.id), ["image-text", "gallery", "text"], "a new section comes last");
    assert.deepEqual(await shownSections(editor), ["Image and text", "Gallery", "Text"]);
    await noViolations(editor, "the page with its new section");

    // Dragged by its grip onto the top half of the first section.
    const rows = editor.locator("ol.sections > li");
    await editor.locator("#sections-h").scrollIntoViewIfNeeded();
    await editor.getByRole("button", { name: "Move Text", exact: true }).dragTo(rows.nth(0), { targetPosition: { x: 20, y: 4 } });
    await live(editor).filter({ hasText: "Moved Text to position 1 of 3." }).waitFor();
    assert.deepEqual(await sectionOrder(team.id), ["text", "image-text", "gallery"]);
    await noViolations(editor, "the page after a drag");

    // The gallery picked up with Space, moved up, put down with Space.
    const gallery = editor.getByRole("button", { name: "Move Gallery", exact: true });
    await gallery.focus();
    await editor.keyboard.press("Space");
    await live(editor).filter({ hasText: "Picked up Gallery at position 3 of 3." }).waitFor();
    assert.equal(await gallery.getAttribute("aria-pressed"), "true");
    await noViolations(editor, "the page with a section picked up");
    await editor.keyboard.press("ArrowUp");
    await live(editor).filter({ hasText: "Gallery, position 2 of 3" }).waitFor();
    assert.deepEqual(await sectionOrder(team.id), ["text", "image-text", "gallery"], "nothing sent while it is held");
    await editor.keyboard.press("Space");
    await live(editor).filter({ hasText: "Moved Gallery to position 2 of 3." }).waitFor();
    assert.deepEqual(await sectionOrder(team.id), ["text", "gallery", "image-text"]);

    // Drawn again, the screen shows the order kept.
    await editor.reload();
    assert.deepEqual(await shownSections(editor), ["Text", "Gallery", "Image and text"]);
    await noViolations(editor, "the page reloaded");
  });

  test("the editor writes the section's body with the toolbar, pastes an image into it and sees it in the live preview", async () => {
    await editor.locator("ol.sections").getByRole("link", { name: "Text", exact: true }).click();
    await editor.getByRole("heading", { name: /^Text\s+on Our team/ }).waitFor();
    const body = editor.getByLabel(/^Body/);
    const toolbar = editor.getByRole("toolbar", { name: "Formatting" });
    assert.equal(await body.inputValue(), "Come and see us.");

    await body.fill("Visiting hours");
    await body.evaluate((a) => a.setSelectionRange(0, a.value.length));
    await toolbar.getByRole("button", { name: "Heading" }).click();
    assert.equal(await body.inputValue(), "## Visiting hours");
    await body.press("End");
    await body.press("Enter");
    await body.pressSequentially("Open to everyone");
    await body.evaluate((a) => a.setSelectionRange(a.value.length - "Open to everyone".length, a.value.length));
    await toolbar.getByRole("button", { name: "Bold" }).click();
    await body.press("End");
    await body.press("Enter");
    await toolbar.getByRole("button", { name: "List" }).click();
    await body.pressSequentially("Tuesdays");
    // Enter in a list item starts the next one; in an empty one, ends the list.
    await body.press("Enter");
    await body.pressSequentially("Thursdays");
    await body.press("Enter");
    await body.press("Enter");
    const typed = "## Visiting hours\n**Open to everyone**\n- Tuesdays\n- Thursdays\n\n";
    assert.equal(await body.inputValue(), typed);

    // The preview, beside the text, is the server's rendering of it.
    await toolbar.getByRole("button", { name: "Preview" }).click();
    assert.equal(await toolbar.getByRole("button", { name: "Preview" }).getAttribute("aria-pressed"), "true");
    const preview = editor.getByRole("region", { name: "Preview" });
    await preview.getByRole("heading", { name: "Visiting hours", level: 2 }).waitFor();
    assert.equal(await preview.locator("strong").innerText(), "Open to everyone");
    assert.deepEqual(await preview.locator("li").allInnerTexts(), ["Tuesdays", "Thursdays"]);
    await noViolations(editor, "the markdown editor with its preview");

    // An image pasted into the text is uploaded into the library, and its markdown takes its place.
    const before = (await api(server, "GET", "/api/v1/images?limit=100")).body.items.length;
    await body.evaluate((area, bytes) => {
      const data = new DataTransfer();
      data.items.add(new File([new Uint8Array(bytes)], "studio-door.png", { type: "image/png" }));
      area.setSelectionRange(area.value.length, area.value.length);
      area.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
    }, [...gradientPng(320, 160, [[34, 94, 168], [241, 163, 64]])]);
    await editor.waitForFunction(
      () => /!\[studio door\]\(\/uploads\/[^)]+\)$/.test(document.querySelector("textarea[data-markdown]").value),
      null,
      { timeout: 30_000 },
    );
    await editor.getByRole("status").filter({ hasText: "studio-door.png is in the library and the text." }).waitFor();
    const url = (await body.inputValue()).match(/!\[studio door\]\((\/uploads\/[^)]+)\)$/)[1];
    assert.equal(await body.inputValue(), `${typed}![studio door](${url})`);
    const library = (await api(server, "GET", "/api/v1/images?limit=100")).body.items;
    assert.equal(library.length, before + 1, "one image more in the library");
    const uploaded = library.find((i) => i.url === url);
    assert.equal(uploaded?.filename, "studio-door.png");
    // The live preview shows it, loaded.
    const image = preview.locator("img[alt='studio door']");
    await image.waitFor();
    assert.equal(await image.getAttribute("src"), url);
    await editor.waitForFunction((img) => img.complete && img.naturalWidth === 320, await image.elementHandle());
    await noViolations(editor, "the markdown editor with the pasted image previewed");
    await shot(editor, "editors-day-editor");

    await editor.getByRole("button", { name: "Save section" }).click();
    await editor.getByText("Saved.").waitFor();
    const sections = (await api(server, "GET", `/api/v1/pages/${team.id}/sections`)).body.items;
    written = sections.find((s) => s.templateKey === "text");
    assert.deepEqual(written.content, { heading: "Visiting the studio", body: `${typed}![studio door](${url})` });
  });

  test("the editor archives a section after a question, and brings it back from the Archive after another", async () => {
    await editor.goto(`${server.base}/pages/${team.id}`);
    await editor.locator("ol.sections").getByRole("link", { name: "Gallery", exact: true }).click();
    await editor.getByRole("heading", { name: /^Gallery\s+on Our team/ }).waitFor();
    const gallery = new URL(editor.url()).pathname.split("/")[2];
    await editor.getByRole("button", { name: "Archive this section…" }).click();
    // Asked first: the question counts what goes along (nothing, for a section).
    await editor.getByRole("heading", { name: "Archive the section Gallery on Our team?", exact: true }).waitFor();
    assert.equal(await editor.locator("ul.along").count(), 0, "nothing goes along with a section");
    await editor.getByText("Nothing is deleted: it leaves the drafts and the site, and the Archive can bring it all back.").waitFor();
    assert.equal((await api(server, "GET", `/api/v1/sections/${gallery}`)).status, 200, "asking changes nothing");
    await noViolations(editor, "archiving a section, asked");
    await editor.getByRole("button", { name: "Archive the section" }).click();
    await editor.waitForURL(`${server.base}/pages/${team.id}#sections-h`);
    assert.deepEqual(await shownSections(editor), ["Text", "Image and text"]);
    assert.equal((await api(server, "GET", `/api/v1/sections/${gallery}`)).status, 404);

    await editor.getByRole("navigation", { name: "Screens" }).getByRole("link", { name: "Archive", exact: true }).click();
    await editor.waitForURL(`${server.base}/archive`);
    // The newest archive, named as it recorded the section.
    const archived = (await api(server, "GET", "/api/v1/archive?entity=section")).body.items[0];
    assert.equal(archived.entityId, gallery);
    const card = editor.locator("section.archive-item").first();
    assert.equal(await card.getByRole("heading").innerText(), `section “${archived.label}”`);
    assert.match(await card.locator("p.meta").innerText(), new RegExp(`by ${EDITOR.name} \\(you\\)`));
    await noViolations(editor, "the Archive");
    await card.getByRole("button", { name: `Restore section ${archived.label}…` }).click();
    await editor.getByRole("heading", { name: `Restore the section ${archived.label}?`, exact: true }).waitFor();
    assert.equal((await api(server, "GET", `/api/v1/sections/${gallery}`)).status, 404, "asking changes nothing");
    await noViolations(editor, "restoring a section, asked");
    await editor.getByRole("button", { name: "Restore the section" }).click();
    await editor.waitForURL(`${server.base}/archive`);
    await card.locator(".status", { hasText: "restored" }).waitFor();
    await noViolations(editor, "the Archive after a restore");
    assert.equal((await api(server, "GET", `/api/v1/sections/${gallery}`)).status, 200);

    // Back on its page, in its place.
    await editor.goto(`${server.base}/pages/${team.id}`);
    assert.deepEqual(await shownSections(editor), ["Text", "Gallery", "Image and text"]);
    assert.deepEqual(await sectionOrder(team.id), ["text", "gallery", "image-text"]);
  });

  test("a viewer invited the same way sees no control that writes and no agent that writes", async () => {
    await admin.goto(`${server.base}/users`);
    const link = await invite(admin, { ...VIEWER, group: "viewer" });
    const viewer = await acceptInvitation(browser, link, VIEWER.password);
    try {
      await viewer.getByRole("heading", { name: "Dashboard", exact: true }).waitFor();
      assert.equal((await viewer.locator(".who").innerText()).replace(/\s+/g, " "), `${VIEWER.name} (viewer)`);
      await noViolations(viewer, "the viewer's dashboard");
      assert.equal(await viewer.getByRole("button", { name: "Translate what is missing" }).count(), 0);

      await viewer.goto(`${server.base}/pages`);
      assert.equal(await viewer.getByRole("button", { name: "Create page" }).count(), 0);
      assert.equal(await viewer.getByRole("checkbox").count(), 0, "no rows to choose for a bulk action");
      assert.equal(await viewer.locator(".grip, form.moves").count(), 0, "nothing to move");
      await noViolations(viewer, "the page tree, as a viewer");

      await viewer.goto(`${server.base}/pages?parent=${team.id}`);
      await viewer.getByRole("link", { name: "Edit “Our team”" }).click();
      await viewer.getByRole("heading", { name: /^Our team/ }).waitFor();
      assert.deepEqual(await shownSections(viewer), ["Text", "Gallery", "Image and text"], "the editor's work, as it stands");
      for (const control of ["Save page", "Add", "Publish", "Archive this page…"]) {
        assert.equal(await viewer.getByRole("button", { name: control, exact: true }).count(), 0, control);
      }
      assert.equal(await viewer.getByLabel("Add a section").count(), 0);
      assert.equal(await viewer.locator(".grip, form.moves").count(), 0, "nothing to move");
      assert.deepEqual(await viewer.locator("[data-ai-action]").evaluateAll((els) => els.map((e) => e.dataset.aiAction)), ["summarize"]);
      await noViolations(viewer, "a page, as a viewer");

      await viewer.locator("ol.sections").getByRole("link", { name: "Text", exact: true }).click();
      await viewer.getByRole("heading", { name: /^Text\s+on Our team/ }).waitFor();
      assert.equal(await viewer.getByLabel(/^Body/).inputValue(), written.content.body);
      assert.equal(await viewer.getByLabel(/^Body/).isEditable(), false);
      assert.equal(await viewer.getByRole("button", { name: "Save section" }).count(), 0);
      assert.equal(await viewer.getByRole("button", { name: "Archive this section…" }).count(), 0);
      await noViolations(viewer, "a section, as a viewer");

      // The sidebar offers no agent that writes: not the editor, and the
      // tools any agent would act with for a viewer only read.
      await viewer.getByRole("button", { name: "AI assistant" }).click();
      const agents = viewer.locator("#ai-agent option");
      await agents.first().waitFor({ state: "attached" });
      assert.deepEqual(await agents.evaluateAll((os) => os.map((o) => o.value).sort()), ["notes", "researcher"]);
      const tools = await viewer.evaluate(async () => (await (await fetch("/api/v1/tools")).json()).items);
      const writing = tools.filter((t) => !t.readOnly && t.category !== "default").map((t) => t.name);
      assert.deepEqual(writing, [], "tools a viewer's agent could write with");
      assert.ok(tools.some((t) => t.name === "getPage"), "reading tools are there");
      await noViolations(viewer, "the sidebar, as a viewer");
    } finally {
      await viewer.context().close();
    }
  });

  test("an agent's turn asks to archive the child page, is approved in the sidebar, follows the editor away and back, and is undone", async () => {
    await editor.goto(`${server.base}/pages/${team.id}`);
    await editor.getByRole("button", { name: "AI assistant" }).click();
    await editor.getByLabel("Agent", { exact: true }).selectOption("editor");
    assert.equal(await editor.locator("#ai-context").innerText(), "Working on: page “Our team”");
    // The editor agent writes drafts: nothing to stage in a release.
    assert.equal((await api(server, "GET", "/api/v1/agents/editor")).body.writeMode, "draft");
    assert.equal(await editor.getByLabel("Stage in").isVisible(), false, "no release to choose for an agent that writes drafts");
    await editor.getByLabel("Message to the agent").fill(`archive page ${child.id}`);
    await editor.getByRole("button", { name: "Send" }).click();
    const question = "Archive the page Studio visits?";
    const widget = editor.getByRole("group", { name: question });
    await widget.waitFor();
    assert.equal(await widget.getByRole("link", { name: "Studio visits", exact: true }).getAttribute("href"), `/pages/${child.id}`);
    await widget.getByText("The exact call: deletePage").click();
    assert.deepEqual(JSON.parse(await widget.locator("pre.ai-args").innerText()), { ids: [child.id] });
    assert.equal((await api(server, "GET", `/api/v1/pages/${child.id}`)).status, 200, "nothing archived before the answer");
    await noViolations(editor, "the sidebar with an approval waiting");
    await shot(editor, "sidebar-approval");

    // Waiting, it is on the dashboard too, and the sidebar keeps it there.
    await editor.getByRole("link", { name: "Dashboard", exact: true }).click();
    await editor.waitForURL(`${server.base}/`);
    const waiting = panel(editor, "Waiting for approval");
    assert.match(await waiting.locator("li").innerText(), new RegExp(`^Archive the page Studio visits\\? · asked by ${EDITOR.name} \\(you\\)$`));
    await editor.getByRole("group", { name: question }).getByRole("button", { name: "Approve" }).waitFor();
    await noViolations(editor, "the dashboard with an approval waiting");
    await editor.goBack();
    await editor.waitForURL(`${server.base}/pages/${team.id}`);

    await editor.getByRole("group", { name: question }).getByRole("button", { name: "Approve" }).click();
    await editor.locator(".ai-assistant", { hasText: "The page is archived." }).waitFor();
    await editor.getByRole("group", { name: question }).locator(".ai-approval-status", { hasText: /^Done: Archived 1 page\(s\)/ }).waitFor();
    assert.equal((await api(server, "GET", `/api/v1/pages/${child.id}`)).status, 404);
    await editor.locator(".ai-after").getByText("Changed: page").waitFor();
    const kinds = await logKinds(editor);
    assert.deepEqual(kinds, ["ai-user", "ai-tool-row", "ai-tool-row", "ai-approval", "ai-assistant", "ai-after"]);
    await noViolations(editor, "the sidebar after the approved turn");

    // Another screen and back: the conversation is there as it was.
    await editor.goto(`${server.base}/pages?parent=${team.id}`);
    await editor.locator("#ai-log .ai-assistant", { hasText: "The page is archived." }).waitFor();
    assert.ok(await editor.locator("#ai").isVisible(), "the sidebar stays open");
    assert.equal(await editor.locator("table.list tbody tr[data-name]").count(), 0, "no child page under Our team now");
    await noViolations(editor, "another screen with the conversation");
    await editor.goto(`${server.base}/pages/${team.id}`);
    // The conversation's last item there, all of it is.
    await editor.locator("#ai-log .ai-after").getByText("Changed: page").waitFor();
    assert.deepEqual(await logKinds(editor), kinds, "the same conversation, each item once");

    await editor.getByRole("button", { name: "Undo this turn" }).click();
    await editor.locator(".ai-note", { hasText: /^Undone: \d+ change\(s\) reverted\.$/ }).waitFor();
    const back = await api(server, "GET", `/api/v1/pages/${child.id}`);
    assert.equal(back.status, 200, "the undo brought the page back");
    assert.equal(back.body.parentId, team.id, "under its parent");
    await noViolations(editor, "the sidebar after the undo");
    await editor.goto(`${server.base}/pages?parent=${team.id}`);
    assert.deepEqual(await editor.locator("table.list tbody tr[data-name]").evaluateAll((rows) => rows.map((r) => r.dataset.name)), ["Studio visits"]);

    // At the end of the day, the dashboard lists the editor's own changes.
    await editor.getByRole("link", { name: "Dashboard", exact: true }).click();
    const mine = panel(editor, "My recent changes");
    await mine.getByRole("link", { name: "Studio visits" }).first().waitFor();
    await mine.getByRole("link", { name: "Text on Our team" }).first().waitFor();
    await noViolations(editor, "the dashboard at the end of the day");
  });
});
