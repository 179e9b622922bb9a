// The content screens beyond pages, in a real browser: posts and
// collections, releases and schedules, autosaved drafts, the media library
// (upload with progress, alt text, archive), navigation menus with the
// target picker, moves among siblings, agents (administrators only),
// previews on the site's own front end or through delivery, the notes
// vault, names instead of ids (History, a change, Approvals, Archive), the
// parent page and image pickers, and comfort: 390 px, dark mode, focus, the
// icon, the heaviest screen's weight; removing (archive from every editor,
// asked first with what goes along, an archived record's URL, a page's
// revision with its sections) and finding (the dashboard, search on the
// lists and across the site, bulk actions); axe-core on each. Screenshots
// are written to docs/screenshots when SCREENSHOTS=1.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { deflateSync } from "node:zlib";
import { api, chooseAdminPassword, launch, noSeriousViolations, noViolations, quire, shot, signIn, signedIn, startServer } from "./harness.mjs";

const ADMIN = "admin@localhost";
const PASSWORD = "a long admin password";
// A 1×1 PNG.
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64",
);

/** CRC-32 of `bytes`, as PNG chunks carry it. */
function crc32(bytes) {
  let c = ~0;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}

/** A 1×1 PNG of the colour `rgb` ([r, g, b]): different bytes for each colour. */
function pngOf(rgb) {
  const chunk = (type, data) => {
    const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
    const out = Buffer.alloc(body.length + 8);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body), body.length + 4);
    return out;
  };
  const header = Buffer.from([0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0]);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(Buffer.from([0, ...rgb]))),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

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

async function adminPage() {
  return signedIn(browser, server, ADMIN, PASSWORD);
}

describe("posts and collections", () => {
  test("a post is written, refused with the error on its field, published and delivered", async () => {
    const page = await adminPage();
    await page.getByRole("link", { name: "Posts and collections" }).click();
    await noSeriousViolations(page, "collections");
    await page.getByRole("link", { name: "Blog", exact: true }).click();
    await page.waitForURL(`${server.base}/collections/blog`);
    await noSeriousViolations(page, "a collection's entries");
    await page.getByLabel("Title", { exact: true }).fill("Launch notes");
    assert.equal(await page.getByLabel("Slug", { exact: true }).inputValue(), "launch-notes");
    // The content a post needs is asked for with it.
    await page.getByLabel(/^Body/).fill("Draft");
    await page.getByRole("button", { name: "Create post" }).click();
    await page.waitForURL(/\/entries\//);
    await noSeriousViolations(page, "post editor");
    // The AI actions are offered for the post.
    await page.getByRole("button", { name: "Summarize" }).waitFor();

    await page.getByLabel("Slug", { exact: true }).fill("Not A Slug");
    await page.getByRole("button", { name: "Save post" }).click();
    const error = page.locator("#e-entry-slug");
    await error.waitFor();
    assert.match(await error.textContent(), /slug/i);
    assert.equal(await page.getByLabel("Slug", { exact: true }).getAttribute("aria-invalid"), "true");
    const stored = await api(server, "GET", "/api/v1/collections/blog/entries?limit=100");
    assert.ok(stored.body.items.some((e) => e.slug === "launch-notes"), "the refused save changed nothing");
    // The heading and the meta line name the post as stored, not as typed.
    assert.equal(await page.locator("p.meta code").textContent(), "launch-notes");

    await page.getByLabel("Slug", { exact: true }).fill("launch-notes");
    await page.getByLabel("Tags (separated by commas)").fill("launch, notes");
    await page.getByLabel("Category").fill("News");
    await page.getByLabel("Status").selectOption("published");
    await page.getByLabel(/^Body/).fill("# Launch\n\nWe shipped **today**.");
    // The image picker shows the library; a pick fills the field. The
    // featured image is the post's one image: no second one to keep equal.
    await page.locator("#f-entry-featuredImage ~ button.pick").click();
    const first = page.locator(".image-choice:has(#f-entry-featuredImage) + .picker button[data-url]").first();
    await first.waitFor();
    const url = await first.getAttribute("data-url");
    await first.click();
    assert.equal(await page.locator("#f-entry-featuredImage").inputValue(), url);
    assert.equal(await page.locator('[id="f-cover.url"]').count(), 0, "no cover field beside it");
    await shot(page, "post-editor");
    await page.getByRole("button", { name: "Save post" }).click();
    await page.getByText("Saved.").waitFor();
    const delivered = await fetch(`${server.base}/api/v1/delivery/collections/blog/entries`).then((r) => r.json());
    const post = delivered.items.find((e) => e.slug === "launch-notes");
    assert.ok(post, "the published post is delivered");
    assert.deepEqual(post.tags, ["launch", "notes"]);
    assert.equal(post.category, "News");
    assert.match(JSON.stringify(post.content), /We shipped/);
    assert.equal(post.featuredImage, url);
    assert.equal(post.content.cover, url, "the cover follows the featured image");
    await page.context().close();
  });

  test("markdown is written with the toolbar and shortcuts, previewed beside the text, and a pasted or dropped image is uploaded and inserted", async () => {
    const page = await adminPage();
    await page.goto(`${server.base}/pages`);
    await page.getByLabel("Name").fill("Writing check");
    await page.getByRole("button", { name: "Create page" }).click();
    await page.getByLabel("Add a section").selectOption("text");
    await page.getByRole("button", { name: "Add", exact: true }).click();
    const body = page.getByLabel(/^Body/);
    const toolbar = page.getByRole("toolbar", { name: "Formatting" });
    await body.fill("Plan");
    await body.evaluate((a) => a.setSelectionRange(0, 4));
    await toolbar.getByRole("button", { name: "Bold" }).click();
    assert.equal(await body.inputValue(), "**Plan**");
    // The same shortcut again takes the marks off; Undo brings them back.
    await body.press("Control+b");
    assert.equal(await body.inputValue(), "Plan");
    await body.press("Control+z");
    assert.equal(await body.inputValue(), "**Plan**");
    await body.press("Control+Shift+H");
    assert.equal(await body.inputValue(), "## **Plan**");
    await body.press("End");
    await body.press("Enter");
    await toolbar.getByRole("button", { name: "Tasks" }).click();
    await body.pressSequentially("call");
    // Enter in a task starts the next one.
    await body.press("Enter");
    await body.pressSequentially("mail");
    await body.press("Enter");
    await body.press("Enter");
    await body.pressSequentially("See the team");
    await body.evaluate((a) => a.setSelectionRange(a.value.length - 4, a.value.length));
    await body.press("Control+k");
    await page.keyboard.type("/team");
    assert.equal(await body.inputValue(), "## **Plan**\n- [ ] call\n- [ ] mail\n\nSee the [team](/team)");
    assert.equal(await page.locator("#find-q").evaluate((f) => f === document.activeElement), false, "Ctrl+K in the text makes a link, not a search");

    // The preview, beside the text, is the server's: tasks are checkboxes.
    await toolbar.getByRole("button", { name: "Preview" }).click();
    assert.equal(await toolbar.getByRole("button", { name: "Preview" }).getAttribute("aria-pressed"), "true");
    const preview = page.getByRole("region", { name: "Preview" });
    await preview.locator("h2").waitFor();
    assert.equal(await preview.locator("input[type=checkbox][disabled]").count(), 2);
    assert.equal(await preview.getByRole("link", { name: "team" }).getAttribute("href"), "/team");
    const [left, right] = [await body.boundingBox(), await preview.boundingBox()];
    assert.ok(right.x > left.x + left.width - 1 && Math.abs(right.y - left.y) < 5, "side by side");
    await noViolations(page, "the markdown editor with its preview");

    // An image pasted into the text goes into the library and into the text.
    const paste = async (type, name, rgb) => {
      await body.evaluate((area, [type, name, bytes]) => {
        const data = new DataTransfer();
        data.items.add(new File([new Uint8Array(bytes)], name, { type: "image/png" }));
        area.setSelectionRange(area.value.length, area.value.length);
        area.dispatchEvent(type === "paste"
          ? new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true })
          : new DragEvent("drop", { dataTransfer: data, bubbles: true, cancelable: true }));
      }, [type, name, [...pngOf(rgb)]]);
    };
    await body.press("Control+End");
    await body.press("Enter");
    await paste("paste", "front-door.png", [10, 200, 30]);
    await page.waitForFunction(() => /!\[front door\]\(\/uploads\/[^)]+\)/.test(document.querySelector("textarea[data-markdown]").value), null, { timeout: 30_000 });
    assert.doesNotMatch(await body.inputValue(), /Uploading/);
    await paste("drop", "back-door.png", [200, 10, 30]);
    await page.waitForFunction(() => /!\[back door\]\(\/uploads\//.test(document.querySelector("textarea[data-markdown]").value), null, { timeout: 30_000 });
    await preview.locator("img[alt='back door']").waitFor();
    const library = (await api(server, "GET", "/api/v1/images?limit=100")).body.items;
    const pasted = (await body.inputValue()).match(/!\[front door\]\((\/uploads\/[^)]+)\)/)[1];
    assert.ok(library.some((i) => i.url === pasted), "the pasted image is in the library");
    // And one from the library, by the toolbar.
    await toolbar.getByRole("button", { name: "Image" }).click();
    await page.getByRole("button", { name: "Insert back door" }).first().click();
    assert.equal((await body.inputValue()).match(/!\[back door\]/g).length, 2);
    await noViolations(page, "the markdown editor after inserting images");

    await page.getByRole("button", { name: "Add section" }).click();
    await page.getByText("Saved.").waitFor();
    const pageId = new URL(page.url()).pathname.split("/")[2];
    const sections = (await api(server, "GET", `/api/v1/pages/${pageId}/sections`)).body.items;
    const saved = sections.find((s) => s.templateKey === "text").content.body;
    assert.match(saved, /^## \*\*Plan\*\*\n- \[ \] call\n- \[ \] mail\n\nSee the \[team\]\(\/team\)\n!\[front door\]/);
    assert.doesNotMatch(saved, /\r/);
    await page.context().close();

    // Without the script the field is a plain text area, and saves the same.
    const context = await browser.newContext({ javaScriptEnabled: false });
    const plain = await context.newPage();
    await signIn(plain, server.base, ADMIN, PASSWORD);
    const section = sections.find((s) => s.templateKey === "text");
    await plain.goto(`${server.base}/sections/${section.id}`);
    assert.equal(await plain.getByRole("toolbar").count(), 0);
    assert.equal(await plain.getByLabel(/^Body/).inputValue(), saved);
    await context.close();
  });
});

describe("releases and schedules", () => {
  test("a release made on its screen takes a page from the editor, shows the difference, settles a conflict, publishes and reverts", async () => {
    const made = await api(server, "POST", "/api/v1/pages", { name: "Summer offer", slug: "summer-offer", meta: { title: "Summer" } });
    assert.equal((await api(server, "POST", `/api/v1/pages/${made.body.id}/publish`)).status, 200);
    const delivered = async () => (await api(server, "GET", "/api/v1/delivery/pages/summer-offer")).body.meta.title;
    assert.equal(await delivered(), "Summer");

    const page = await adminPage();
    await page.getByRole("link", { name: "Releases" }).click();
    await page.waitForURL(`${server.base}/releases`);
    // A release needs a name: refused, the error is beside the field.
    await page.getByRole("button", { name: "Make release" }).click();
    assert.equal(await page.getByLabel("Name", { exact: true }).getAttribute("aria-invalid"), "true");
    await page.getByLabel("Name", { exact: true }).fill("Summer campaign");
    await page.getByLabel("What it is for (optional)").fill("The summer prices, all at once.");
    await page.getByRole("button", { name: "Make release" }).click();
    await page.getByRole("heading", { name: /^Summer campaign/ }).waitFor();
    await page.getByText("No documents yet.").waitFor();
    await noViolations(page, "an empty release");

    // The page's draft changes, then the page goes into the release from its editor.
    await page.goto(`${server.base}/pages/${made.body.id}`);
    await page.getByLabel("Meta title").fill("Summer, half price");
    await page.getByRole("button", { name: "Save page" }).click();
    await page.getByText("Saved.").waitFor();
    await page.getByLabel("Release", { exact: true }).selectOption({ label: "Summer campaign" });
    assert.equal(await page.getByLabel("Name of the new release").isVisible(), false, "a new release's name is asked for only when one is made");
    await page.getByRole("button", { name: "Add to release" }).click();
    await page.getByText("Added to the release").waitFor();
    await page.locator(".publishing").getByText("which publishes it").waitFor();
    await page.getByRole("link", { name: "“Summer campaign”" }).click();

    const item = page.locator("section.release-item", { hasText: "Summer offer" });
    const title = item.locator("table.diff tr", { has: page.getByRole("rowheader", { name: "meta.title" }) });
    assert.equal(await title.locator("pre.before").innerText(), "Summer");
    assert.equal(await title.locator("pre.after").innerText(), "Summer, half price");
    assert.equal(await item.getByRole("link", { name: "Summer offer" }).getAttribute("href"), `/pages/${made.body.id}`);
    await noViolations(page, "a release");
    assert.equal(await delivered(), "Summer", "staged is not published");

    // The draft moves on after staging: the release says so, and staging again takes it.
    await api(server, "PATCH", `/api/v1/pages/${made.body.id}`, { meta: { title: "Summer, 40% off" } });
    await page.reload();
    const conflict = item.getByRole("group", { name: "Conflict of Summer offer" });
    assert.match(await conflict.innerText(), /draft changes made since it was staged/);
    await noViolations(page, "a release with a conflict");
    page.once("dialog", (d) => d.accept());
    await page.getByRole("button", { name: "Publish now" }).click();
    assert.match(await page.locator("#release-error").innerText(), /Summer offer/);
    assert.equal(await delivered(), "Summer", "a release with a conflict publishes nothing");
    await conflict.getByRole("button", { name: "Stage again" }).click();
    await page.getByText("Staged again").waitFor();
    assert.equal(await item.getByRole("group").count(), 0, "the conflict is settled");
    assert.equal(await title.locator("pre.after").innerText(), "Summer, 40% off");

    // Publishing asks first; declined, nothing changes.
    page.once("dialog", (d) => d.dismiss());
    await page.getByRole("button", { name: "Publish now" }).click();
    assert.equal(await delivered(), "Summer");
    page.once("dialog", (d) => { assert.match(d.message(), /^Publish the 1 document\(s\) of “Summer campaign”/); d.accept(); });
    await page.getByRole("button", { name: "Publish now" }).click();
    await page.getByText("Published: every document of the release is on the site.").waitFor();
    assert.equal(await delivered(), "Summer, 40% off");
    await shot(page, "release");

    page.once("dialog", (d) => d.accept());
    await page.getByRole("button", { name: "Revert" }).click();
    await page.getByText("Reverted: the site shows what it showed before the release.").waitFor();
    assert.equal(await delivered(), "Summer");

    await page.getByRole("navigation", { name: "Breadcrumb" }).getByRole("link", { name: "Releases" }).click();
    const row = page.locator("table.list tr", { hasText: "Summer campaign" });
    assert.deepEqual(
      (await row.locator("td").allInnerTexts()).slice(0, 3).map((t) => t.trim()),
      ["Summer campaign", "reverted", "1"],
    );
    await page.getByLabel("State").selectOption("open");
    await page.getByRole("button", { name: "Filter" }).click();
    assert.equal(await page.locator("table.list tr", { hasText: "Summer campaign" }).count(), 0, "filtered out");
    await page.context().close();
  });

  test("a publish scheduled from an editor is read in the browser's time zone, listed, and cancelled", async () => {
    const made = await api(server, "POST", "/api/v1/pages", { name: "Autumn offer", slug: "autumn-offer" });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, timezoneId: "Europe/Paris" });
    const page = await context.newPage();
    await signIn(page, server.base, ADMIN, PASSWORD);
    await page.waitForURL(`${server.base}/`);
    await page.goto(`${server.base}/pages`);
    await page.goto(`${server.base}/pages/${made.body.id}`);
    const time = page.getByLabel("Time (your time, Europe/Paris)");

    // A time gone by is refused beside its input, and nothing is scheduled.
    await time.fill("2001-01-01T09:00");
    await page.getByRole("button", { name: "Schedule", exact: true }).click();
    assert.equal(await page.locator("#e-pub-at").innerText(), "must be in the future");
    assert.equal(await page.getByLabel(/^Time/).getAttribute("aria-invalid"), "true");
    await noSeriousViolations(page, "a refused schedule");
    assert.equal((await api(server, "GET", "/api/v1/schedules")).body.items.filter((s) => s.targetId === made.body.id).length, 0);

    await page.getByLabel(/^Time/).fill("2031-03-01T12:00");
    await page.getByRole("button", { name: "Schedule", exact: true }).click();
    await page.getByText("Scheduled.").waitFor();
    const waiting = (await api(server, "GET", "/api/v1/schedules")).body.items.filter((s) => s.targetId === made.body.id);
    assert.equal(waiting.length, 1);
    assert.equal(waiting[0].at, "2031-03-01T11:00:00Z", "noon in Paris is 11:00 UTC in March");
    assert.equal(waiting[0].action, "publish");
    const line = page.getByRole("list", { name: "Waiting schedules" }).getByRole("listitem");
    assert.match(await line.innerText(), /^Publish at 2031-03-01 12:00, scheduled by Admin \(you\)/);

    // The Releases screen lists it with what it publishes.
    await page.getByRole("link", { name: "Releases" }).click();
    const listed = page.locator("#schedules tr", { hasText: "Autumn offer" });
    assert.match(await listed.innerText(), /2031-03-01 12:00\s+Page “Autumn offer”\s+Publish\s+Admin \(you\)/);
    await noViolations(page, "releases");

    await page.goto(`${server.base}/pages/${made.body.id}`);
    await line.getByRole("button", { name: "Cancel" }).click();
    await page.getByText("Schedule cancelled.").waitFor();
    assert.equal(await line.count(), 0);
    const all = (await api(server, "GET", "/api/v1/schedules?all=true")).body.items.find((s) => s.id === waiting[0].id);
    assert.equal(all.status, "cancelled");
    assert.equal((await api(server, "GET", "/api/v1/delivery/pages/autumn-offer")).status, 404, "never published");
    await context.close();
  });

  test("past schedules show how they ended; a release is scheduled and unscheduled on its screen", async () => {
    const made = await api(server, "POST", "/api/v1/pages", { name: "Flash sale", slug: "flash-sale" });
    // A release whose page changes after staging: due, it fails, and says why.
    const doomed = await api(server, "POST", "/api/v1/pages", { name: "Doomed offer", slug: "doomed-offer" });
    const broken = await api(server, "POST", "/api/v1/releases", { name: "Broken" });
    await api(server, "POST", `/api/v1/releases/${broken.body.id}/items`, { entity: "page", id: doomed.body.id });
    await api(server, "PATCH", `/api/v1/pages/${doomed.body.id}`, { name: "Doomed offer, changed" });
    const soon = new Date(Date.now() + 1500).toISOString();
    const scheduled = await api(server, "POST", "/api/v1/schedules", { entity: "page", id: made.body.id, action: "publish", at: soon });
    assert.equal(scheduled.status, 201, JSON.stringify(scheduled.body));
    const failing = await api(server, "POST", "/api/v1/schedules", { entity: "release", id: broken.body.id, at: soon });
    assert.equal(failing.status, 201, JSON.stringify(failing.body));
    const ended = async (id) => ["done", "failed"].includes((await api(server, "GET", `/api/v1/schedules/${id}`)).body.status);
    for (let i = 0; i < 40 && !((await ended(scheduled.body.id)) && (await ended(failing.body.id))); i++) {
      await new Promise((r) => setTimeout(r, 250));
    }
    assert.equal((await api(server, "GET", "/api/v1/delivery/pages/flash-sale")).status, 200, "published at its time");

    const release = await api(server, "POST", "/api/v1/releases", { name: "Winter" });
    await api(server, "POST", `/api/v1/releases/${release.body.id}/items`, { entity: "page", id: made.body.id, action: "unpublish" });

    const page = await adminPage();
    await page.goto(`${server.base}/releases`);
    assert.equal(await page.locator("#schedules tr", { hasText: "Flash sale" }).count(), 0, "only waiting schedules at first");
    await page.getByRole("link", { name: "Show past schedules too" }).click();
    const past = page.locator("#schedules tr", { hasText: "Flash sale" });
    assert.match(await past.innerText(), /done\s+(on time|\d+ s late)/);
    const failed = page.locator("#schedules tr", { hasText: "Release “Broken”" });
    assert.match(await failed.innerText(), /failed\s+(on time|\d+ s late)\s+.*draft changes made since it was staged/);
    await shot(page, "releases");

    await page.getByRole("link", { name: "Winter" }).click();
    await page.locator("section.release-item", { hasText: "Flash sale" }).getByText("When the release is published, it takes it off the site.").waitFor();
    await page.getByLabel(/^Publish at/).fill("2031-12-01T08:30");
    await page.getByRole("button", { name: "Schedule", exact: true }).click();
    await page.getByText("Scheduled.").waitFor();
    await page.getByRole("heading", { name: "Winter scheduled" }).waitFor();
    assert.match(await page.locator("main").innerText(), /Due to publish at 2031-12-01 08:30/);
    assert.equal((await api(server, "GET", `/api/v1/releases/${release.body.id}`)).body.release.publishAt, "2031-12-01T08:30:00Z");
    await page.getByRole("button", { name: "Unschedule" }).click();
    await page.getByText("Unscheduled: the release is open again.").waitFor();
    assert.equal((await api(server, "GET", `/api/v1/releases/${release.body.id}`)).body.release.state, "open");

    // Discarding asks first.
    page.once("dialog", (d) => { assert.match(d.message(), /^Discard “Winter”\?/); d.accept(); });
    await page.getByRole("button", { name: "Discard this release" }).click();
    await page.getByText("Discarded: the release will not be published.").waitFor();
    assert.equal((await api(server, "GET", "/api/v1/delivery/pages/flash-sale")).status, 200, "a discarded release changed nothing");
    await page.context().close();
  });

  test("an entry's draft saves itself without publishing, even with its status set to published", async () => {
    const made = await api(server, "POST", "/api/v1/collections/blog/entries", { title: "Quiet draft", slug: "quiet-draft", content: { body: "Not yet." } });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const page = await adminPage();
    await page.goto(`${server.base}/entries/${made.body.id}`);
    await page.getByLabel("Status").selectOption("published");
    await page.getByLabel("Title", { exact: true }).fill("Quiet draft, edited");
    await page.getByText(/^Draft saved at \d\d:\d\d$/).waitFor({ timeout: 10_000 });
    const stored = (await api(server, "GET", `/api/v1/entries/${made.body.id}`)).body;
    assert.equal(stored.title, "Quiet draft, edited");
    assert.equal(stored.status, "draft", "an autosave never publishes");
    const delivered = await fetch(`${server.base}/api/v1/delivery/collections/blog/entries`).then((r) => r.json());
    assert.ok(!delivered.items.some((e) => e.slug === "quiet-draft"));
    await page.reload();
    assert.equal(await page.getByLabel("Title", { exact: true }).inputValue(), "Quiet draft, edited");
    assert.equal(await page.getByLabel("Status").inputValue(), "draft");
    await page.context().close();
  });
});

describe("media library", () => {
  test("an upload shows its progress until ready; alt text is saved; an archived image is no longer served", async () => {
    const page = await adminPage();
    await page.getByRole("link", { name: "Media" }).click();
    await page.waitForURL(`${server.base}/media`);
    await page.getByLabel("Images (PNG, JPEG, WebP or GIF)").setInputFiles({ name: "dot.png", mimeType: "image/png", buffer: PNG });
    await page.getByRole("button", { name: "Upload" }).click();
    const row = page.locator("[data-upload-list] li", { hasText: "dot.png" });
    await row.locator("progress").waitFor();
    await row.getByText("ready").waitFor({ timeout: 30_000 });
    assert.equal(await row.locator("progress").getAttribute("value"), "100");

    // A file that is not an image is refused with the server's reason.
    await page.getByLabel("Images (PNG, JPEG, WebP or GIF)").setInputFiles({ name: "x.svg", mimeType: "image/svg+xml", buffer: Buffer.from("<svg xmlns='http://www.w3.org/2000/svg'><script>1</script></svg>") });
    await page.getByRole("button", { name: "Upload" }).click();
    await page.locator("[data-upload-list] li", { hasText: "x.svg" }).getByText(/refused: .*SVG/i).waitFor();

    await page.reload();
    const tile = page.locator(".tile", { hasText: "dot.png" });
    await tile.getByText("no alt text").waitFor();
    await noSeriousViolations(page, "media grid");
    await shot(page, "media");
    await tile.getByRole("link").click();
    await page.waitForURL(/\/media\//);
    await noSeriousViolations(page, "an image");
    await page.getByLabel(/^Alt text/).fill("A single red dot");
    await page.getByLabel("Tags (separated by commas)").fill("dot, test");
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await page.getByText("Saved.").waitFor();
    const id = page.url().split("/media/")[1].split("?")[0];
    const image = (await api(server, "GET", `/api/v1/images/${id}`)).body;
    assert.equal(image.alt, "A single red dot");
    assert.deepEqual(image.tags, ["dot", "test"]);

    await page.getByRole("navigation", { name: "Breadcrumb" }).getByRole("link", { name: "Media" }).click();
    await page.getByLabel("Search").fill("red dot");
    await page.getByRole("button", { name: "Search" }).click();
    await page.locator(".tile", { hasText: "dot.png" }).waitFor();
    assert.equal(await page.locator(".tile", { hasText: "dot.png" }).getByText("no alt text").count(), 0);

    await page.locator(".tile", { hasText: "dot.png" }).getByRole("link").click();
    const served = await fetch(`${server.base}${image.url}`);
    assert.equal(served.status, 200);
    await page.getByRole("button", { name: "Archive this image…" }).click();
    await page.getByRole("heading", { name: /^Archive the image / }).waitFor();
    await page.getByRole("button", { name: "Archive the image" }).click();
    await page.getByText("Archived.").waitFor();
    assert.equal((await fetch(`${server.base}${image.url}`)).status, 404);
    // Its address says where it went.
    assert.equal((await page.goto(`${server.base}/media/${id}`)).status(), 410);
    await page.getByRole("heading", { name: /^The image “.+” is archived$/ }).waitFor();
    await page.context().close();
  });

  test("a search pages through its hits screen by screen, keeping the query", async () => {
    for (let i = 0; i < 50; i++) {
      const form = new FormData();
      form.append("file", new Blob([pngOf([i, 200, 100])], { type: "image/png" }), `pager-${i}.png`);
      const res = await fetch(`${server.base}/api/v1/images`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.token}` },
        body: form,
      });
      assert.equal(res.status, 202, await res.text());
    }
    const page = await adminPage();
    await page.goto(`${server.base}/media?q=pager`);
    const ids = async () => page.locator(".grid .tile").evaluateAll((tiles) => tiles.map((t) => t.dataset.imageId));
    const first = await ids();
    assert.equal(first.length, 48, "a screen holds 48 hits");
    await page.getByRole("link", { name: "Next page" }).click();
    await page.waitForURL(/cursor=48/);
    assert.equal(new URL(page.url()).searchParams.get("q"), "pager", "the next screen keeps the query");
    const second = await ids();
    assert.equal(second.length, 2, "the last two hits");
    assert.ok(second.every((id) => !first.includes(id)), "no hit is shown twice");
    assert.equal(await page.getByRole("link", { name: "Next page" }).count(), 0);
    const bad = await page.goto(`${server.base}/media?q=pager&cursor=nonsense`);
    assert.equal(bad.status(), 400);
    assert.match(await page.locator("main").innerText(), /cursor/);
    await page.context().close();
  });

  test("without JavaScript the upload form still uploads, and names a refused file with the reason", async () => {
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await signIn(page, server.base, ADMIN, PASSWORD);
    await page.waitForURL(`${server.base}/`);
    await page.goto(`${server.base}/pages`);
    await page.goto(`${server.base}/media`);
    // A 2×1 PNG of its own, so the library does not answer with an earlier image.
    const png = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAIAAAB7QOjdAAAAD0lEQVR4nGPgqjjxX0MOAAkmApBqxkhhAAAAAElFTkSuQmCC", "base64");
    await page.getByLabel("Images (PNG, JPEG, WebP or GIF)").setInputFiles([
      { name: "plain.png", mimeType: "image/png", buffer: png },
      { name: "plain.svg", mimeType: "image/svg+xml", buffer: Buffer.from("<svg xmlns='http://www.w3.org/2000/svg'/>") },
    ]);
    await page.getByRole("button", { name: "Upload" }).click();
    await page.waitForURL(`${server.base}/media/upload`);
    const list = page.locator("[data-upload-list]");
    await list.locator("li", { hasText: "plain.png" }).getByRole("link").waitFor();
    assert.match(await list.locator("li.error", { hasText: "plain.svg" }).textContent(), /refused: .*SVG/i);
    const images = (await api(server, "GET", "/api/v1/images?limit=100")).body.items;
    assert.ok(images.some((i) => i.filename === "plain.png"), "the image was made");
    assert.ok(!images.some((i) => i.filename === "plain.svg"), "the refused file made nothing");

    // A form without the session's secret reads no file and makes nothing.
    const forged = await page.request.post(`${server.base}/media/upload`, {
      multipart: { file: { name: "forged.png", mimeType: "image/png", buffer: PNG } },
      maxRedirects: 0,
    });
    assert.equal(forged.status(), 403);
    const after = (await api(server, "GET", "/api/v1/images?limit=100")).body.items;
    assert.ok(!after.some((i) => i.filename === "forged.png"));
    await context.close();
  });
});

describe("navigation", () => {
  test("a menu shows its items nested; an item is added through the picker, moved, and delivered in order", async () => {
    const page = await adminPage();
    await page.getByRole("link", { name: "Navigation" }).click();
    await noSeriousViolations(page, "menus");
    await page.getByRole("link", { name: "Header" }).click();
    await page.waitForURL(/\/navigation\//);
    const team = page.locator(".menu-items li", { hasText: "Team" });
    assert.match(await team.getAttribute("class"), /depth-1/);

    // The picker suggests pages for a page target, nothing for a URL.
    const target = page.getByLabel(/^Target/);
    assert.equal(await target.getAttribute("list"), "targets-page");
    assert.ok((await page.locator("#targets-page option").count()) > 3);
    await page.getByLabel("Points at").selectOption("url");
    assert.equal(await target.getAttribute("list"), null);

    await page.getByLabel("Label").fill("Docs");
    await target.fill("javascript:alert(1)");
    await page.getByRole("button", { name: "Add item" }).click();
    await page.locator("#e-target").waitFor();
    await noSeriousViolations(page, "a menu with an error");
    await page.getByLabel("Points at").selectOption("url");
    await page.getByLabel(/^Target/).fill("https://docs.example.com/");
    await page.getByRole("button", { name: "Add item" }).click();
    await page.locator(".menu-items li", { hasText: "Docs" }).waitFor();
    // A page can be named by its slug instead of its id.
    await page.getByLabel("Label").fill("Prices");
    await page.getByLabel(/^Target/).fill("/pricing");
    await page.getByLabel("Under").selectOption({ label: "About" });
    await page.getByRole("button", { name: "Add item" }).click();
    await page.locator(".menu-items li", { hasText: "Prices" }).waitFor();
    const items = (await api(server, "GET", "/api/v1/navigations/header/items?limit=100")).body.items;
    const prices = items.find((i) => i.label === "Prices");
    const pricing = (await api(server, "GET", "/api/v1/pages?limit=100")).body.items.find((p) => p.slug === "pricing");
    assert.equal(prices.targetId, pricing.id);
    assert.equal(prices.parentId, items.find((i) => i.label === "About").id);
    assert.match(await page.locator(".menu-items li", { hasText: "Prices" }).getAttribute("class"), /depth-1/);
    await shot(page, "navigation");

    const order = async () =>
      (await fetch(`${server.base}/api/v1/delivery/navigations/header`).then((r) => r.json())).items.map((i) => i.label);
    // Items are changes of the menu's draft until the menu is published.
    assert.ok(!(await order()).includes("Docs"), "the new item waits for the menu to be published");
    const publish = async () => {
      await page.getByRole("button", { name: "Publish", exact: true }).click();
      await page.getByText("Published.", { exact: true }).waitFor();
    };
    await publish();
    const before = await order();
    assert.equal(before.at(-1), "Docs");
    await page.getByRole("button", { name: "Move Docs up" }).click();
    await page.locator(".menu-items li", { hasText: "Docs" }).waitFor();
    await publish();
    const afterMove = await order();
    assert.deepEqual(afterMove.slice(-2), ["Docs", before.at(-2)]);
    // The move is one logged change per item, undoable like any other.
    const changes = await api(server, "GET", "/api/v1/changes?entity=navItem&limit=5");
    assert.ok(changes.body.items.filter((c) => c.action === "update").length >= 2);
    await page.context().close();
  });
});

describe("moving pages", () => {
  test("a root page moves up among its siblings", async () => {
    const page = await adminPage();
    const names = async () => page.locator('table.list tbody tr a[href^="/pages/"]').allTextContents();
    const before = await names();
    await page.getByRole("button", { name: `Move ${before[1]} up` }).click();
    await page.waitForURL(/\/pages/);
    const after = await names();
    assert.deepEqual(after.slice(0, 2), [before[1], before[0]]);
    assert.equal(await page.getByRole("button", { name: `Move ${after[0]} up` }).isDisabled(), true);
    await page.context().close();
  });
});

describe("agents", () => {
  test("an administrator edits an agent; a selector that matches nothing is named; an editor cannot open the screen", async () => {
    const page = await adminPage();
    await page.getByRole("link", { name: "Agents" }).click();
    await noSeriousViolations(page, "agents");
    await page.getByRole("link", { name: "Researcher" }).click();
    await page.waitForURL(/\/agents\/researcher/);
    await noSeriousViolations(page, "an agent");
    await shot(page, "agent");
    // A context that is not there is named beside its field, and nothing is saved.
    const contexts = page.getByLabel(/^Contexts in every turn/);
    await contexts.fill("no-such-context");
    await page.getByRole("button", { name: "Save agent" }).click();
    await page.locator("#e-contexts", { hasText: "no context no-such-context" }).waitFor();
    assert.equal(await contexts.getAttribute("aria-invalid"), "true");
    assert.deepEqual((await api(server, "GET", "/api/v1/agents/researcher")).body.contexts, []);
    await noSeriousViolations(page, "an agent with a refused context");
    await contexts.fill("brand-voice");
    const tools = page.getByLabel(/^Tools it may use/);
    await tools.fill(`${await tools.inputValue()}\nnoSuchTool`);
    await page.getByLabel(/^Instructions/).fill("Cite every source.");
    await page.getByLabel("editor").check();
    // Each write mode is offered, with what it means.
    const modes = page.getByRole("group", { name: "Where its changes go" }).getByRole("radio");
    assert.deepEqual(await modes.evaluateAll((rs) => rs.map((r) => r.value)), ["draft", "release", "direct"]);
    assert.equal(await page.getByRole("radio", { name: /^Drafts/ }).isChecked(), true);
    const release = page.getByRole("radio", { name: /^A release for each turn/ });
    assert.match(await release.evaluate((r) => document.getElementById(r.getAttribute("aria-describedby")).textContent), /release of their own/);
    await release.check();
    await page.getByRole("button", { name: "Save agent" }).click();
    await page.getByText("Saved.").waitFor();
    await page.getByText("“noSuchTool” matches no tool").waitFor();
    const agent = (await api(server, "GET", "/api/v1/agents/researcher")).body;
    assert.equal(agent.systemPrompt, "Cite every source.");
    assert.ok(agent.allowedGroups.includes("editor"));
    assert.ok(agent.tools.includes("noSuchTool"));
    assert.equal(agent.writeMode, "release");
    assert.deepEqual(agent.contexts, ["brand-voice"]);
    assert.equal(await page.getByRole("radio", { name: /^A release for each turn/ }).isChecked(), true);
    await page.context().close();

    quire(server.data, ["user", "create", "--email", "eddie@example.org", "--group", "editor", "--password-stdin"], "editor password 1\n");
    const context = await browser.newContext();
    const editor = await context.newPage();
    await signIn(editor, server.base, "eddie@example.org", "editor password 1");
    await editor.waitForURL(`${server.base}/`);
    await editor.goto(`${server.base}/pages`);
    assert.equal(await editor.getByRole("link", { name: "Agents" }).count(), 0);
    const res = await editor.goto(`${server.base}/agents/researcher`);
    assert.equal(res.status(), 403);
    await context.close();
  });
});

describe("previews", () => {
  test("an editor's preview opens the site's own front end with a fresh preview token, or delivery once that is cleared", async () => {
    // The site's own front end: it reads the draft from delivery with the token it is given.
    const frontEnd = http.createServer(async (req, res) => {
      const url = new URL(req.url, "http://front.end");
      const slug = url.pathname.split("/").pop();
      const token = url.searchParams.get("preview");
      const draft = await fetch(`${server.base}/api/v1/delivery/pages/${slug}?previewToken=${encodeURIComponent(token)}`).then((r) => r.json());
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(`<!doctype html><html lang="en"><title>Front end</title><h1>${String(draft.name).replace(/[<&]/g, "")}</h1></html>`);
    });
    await new Promise((r) => frontEnd.listen(0, "127.0.0.1", r));
    const front = `http://127.0.0.1:${frontEnd.address().port}`;
    try {
      const created = await api(server, "POST", "/api/v1/pages", { name: "Opening hours", slug: "opening-hours" });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const id = created.body.id;
      assert.equal((await api(server, "POST", `/api/v1/pages/${id}/publish`)).status, 200);
      await api(server, "PATCH", `/api/v1/pages/${id}`, { name: "Opening hours, summer" });

      const page = await adminPage();
      await page.getByRole("link", { name: "Site", exact: true }).click();
      await page.waitForURL(`${server.base}/site`);
      await noViolations(page, "the site screen");
      const field = page.getByLabel(/^Preview address/);
      // A refusal is said beside the field, and nothing changes.
      await field.fill("ftp://example.com/{slug}");
      await page.getByRole("button", { name: "Save" }).click();
      await page.locator("#e-preview-url", { hasText: "an http or https URL" }).waitFor();
      assert.equal(await field.getAttribute("aria-invalid"), "true");
      assert.equal(await field.inputValue(), "ftp://example.com/{slug}", "what was typed is kept");
      assert.equal((await api(server, "GET", "/api/v1/site")).body.previewUrl, null);
      await noViolations(page, "the site screen with a refusal");

      await field.fill("https://www.example.com/{kind}/{slug}?preview={token}");
      await page.getByRole("button", { name: "Save" }).click();
      await page.getByText("Saved.").waitFor();
      await shot(page, "site");
      await page.getByLabel(/^Preview address/).fill(`${front}/{kind}/{slug}?preview={token}`);
      const saved = page.waitForResponse((r) => r.request().method() === "POST" && r.url() === `${server.base}/site`);
      await page.getByRole("button", { name: "Save" }).click();
      assert.equal((await saved).status(), 303);
      await page.getByText("Saved.").waitFor();
      assert.equal((await api(server, "GET", "/api/v1/site")).body.previewUrl, `${front}/{kind}/{slug}?preview={token}`);

      // The editor's link makes a preview link as it is followed, and opens the front end.
      await page.goto(`${server.base}/pages/${id}`);
      await page.getByText("on the site's own front end").waitFor();
      const link = page.getByRole("link", { name: "Preview the draft" });
      assert.equal(await link.getAttribute("href"), `/pages/${id}/preview`);
      const [shown] = await Promise.all([page.waitForEvent("popup"), link.click()]);
      await shown.locator("h1", { hasText: "Opening hours, summer" }).waitFor();
      const opened = new URL(shown.url());
      assert.equal(`${opened.origin}${opened.pathname}`, `${front}/page/opening-hours`);
      assert.match(opened.searchParams.get("preview"), /^qp_[0-9a-f]+$/);
      await shown.close();
      // Each time, a fresh one.
      const [again] = await Promise.all([page.waitForEvent("popup"), link.click()]);
      await again.waitForLoadState();
      assert.notEqual(new URL(again.url()).searchParams.get("preview"), opened.searchParams.get("preview"));
      await again.close();

      // Cleared, the preview is the delivery API's, showing the draft.
      await page.goto(`${server.base}/site`);
      await page.getByLabel(/^Preview address/).fill("");
      await page.getByRole("button", { name: "Save" }).click();
      await page.getByText("Saved.").waitFor();
      assert.equal((await api(server, "GET", "/api/v1/site")).body.previewUrl, null);
      await page.goto(`${server.base}/pages/${id}`);
      await page.getByText("as the delivery API would serve it").waitFor();
      const [delivery] = await Promise.all([page.waitForEvent("popup"), page.getByRole("link", { name: "Preview the draft" }).click()]);
      await delivery.waitForLoadState();
      const served = new URL(delivery.url());
      assert.equal(`${served.origin}${served.pathname}`, `${server.base}/api/v1/delivery/pages/opening-hours`);
      assert.match(served.searchParams.get("previewToken"), /^qp_[0-9a-f]+$/);
      assert.equal(JSON.parse(await delivery.locator("body").innerText()).name, "Opening hours, summer");
      const published = await fetch(`${server.base}/api/v1/delivery/pages/opening-hours`).then((r) => r.json());
      assert.equal(published.name, "Opening hours", "without the token, what is published");
      await page.context().close();
    } finally {
      await new Promise((r) => frontEnd.close(r));
    }
  });

  test("an entry's editor previews its draft too; an editor is not offered the site screen", async () => {
    const post = (await api(server, "GET", "/api/v1/collections/blog/entries?limit=1")).body.items[0];
    const page = await adminPage();
    await page.goto(`${server.base}/entries/${post.id}`);
    const link = page.getByRole("link", { name: "Preview the draft" });
    assert.equal(await link.getAttribute("href"), `/entries/${post.id}/preview`);
    const [shown] = await Promise.all([page.waitForEvent("popup"), link.click()]);
    await shown.waitForLoadState();
    const served = new URL(shown.url());
    assert.equal(served.pathname, "/api/v1/delivery/collections/blog/entries");
    assert.match(served.searchParams.get("previewToken"), /^qp_/);
    const listed = JSON.parse(await shown.locator("body").innerText());
    assert.ok(listed.items.some((e) => e.id === post.id), JSON.stringify(listed));
    await page.context().close();

    quire(server.data, ["user", "create", "--email", "penny@example.org", "--group", "editor", "--password-stdin"], "editor password 2\n");
    const editor = await signedIn(browser, server, "penny@example.org", "editor password 2");
    assert.equal(await editor.getByRole("link", { name: "Site", exact: true }).count(), 0);
    assert.equal((await editor.goto(`${server.base}/site`)).status(), 403);
    await editor.goto(`${server.base}/pages`);
    const forced = await editor.evaluate(async () => {
      const csrf = document.querySelector('meta[name="csrf-token"]').content;
      const r = await fetch("/site", { method: "POST", body: new URLSearchParams({ _csrf: csrf, preview_url: "https://evil.example/{token}" }) });
      return r.status;
    });
    assert.equal(forced, 403);
    assert.equal((await api(server, "GET", "/api/v1/site")).body.previewUrl, null);
    await editor.context().close();
  });
});

describe("notes", () => {
  test("a note is created, written, listed, logged and archived", async () => {
    const page = await adminPage();
    await page.getByRole("link", { name: "Notes" }).click();
    await page.waitForURL(`${server.base}/notes`);
    await noSeriousViolations(page, "notes");
    await page.getByLabel("Kind").selectOption("folder");
    await page.getByLabel("Name").fill("plans");
    await page.getByRole("button", { name: "Create" }).click();
    await page.waitForURL(/\/notes\?path=plans/);
    await page.getByLabel("Name").fill("launch");
    await page.getByRole("button", { name: "Create" }).click();
    await page.waitForURL(/\/notes\/edit\?path=plans%2Flaunch\.md/);
    await page.getByLabel("Text (markdown)").fill("# Launch\n\n- write the post\n- <script>alert(1)</script>");
    await page.getByRole("button", { name: "Save note" }).click();
    await page.getByText("Saved.").waitFor();
    assert.match(await page.getByLabel("Text (markdown)").inputValue(), /write the post\n- <script>/);
    // Someone else saves the note while it is open: saving is refused,
    // their text kept, until the person saves again knowingly.
    const other = await api(server, "POST", "/api/v1/tools/writeNote/invoke", { path: "plans/launch.md", content: "their text", overwrite: true });
    assert.equal(other.body.success, true);
    await page.getByLabel("Text (markdown)").fill("my text");
    await page.getByRole("button", { name: "Save note" }).click();
    await page.getByText("it changed since you opened it").waitFor();
    const kept = await api(server, "POST", "/api/v1/tools/readNote/invoke", { path: "plans/launch.md", startLine: 1 });
    assert.match(kept.body.content, /their text/);
    assert.equal(await page.getByLabel("Text (markdown)").inputValue(), "my text");
    await page.getByRole("button", { name: "Save note" }).click();
    await page.getByText("Saved.").waitFor();
    assert.equal(await page.getByLabel("Text (markdown)").inputValue(), "my text");
    await noSeriousViolations(page, "a note");
    await shot(page, "note");
    const changes = await api(server, "GET", "/api/v1/changes?entity=note&limit=5");
    assert.ok(changes.body.items.some((c) => c.entityId === "plans/launch.md" && c.surface === "web"));
    await page.getByRole("link", { name: "plans" }).click();
    await page.getByRole("link", { name: "launch.md" }).waitFor();
    await page.getByRole("link", { name: "launch.md" }).click();
    await page.getByRole("button", { name: "Archive this note" }).click();
    await page.waitForURL(/\/notes\?path=plans/);
    assert.equal(await page.getByRole("link", { name: "launch.md" }).count(), 0);
    await page.context().close();
  });
});

describe("signing in again", () => {
  test("ends the session the browser held before", async () => {
    const page = await adminPage();
    const first = (await page.context().cookies()).find((c) => c.name === "quire_session").value;
    await signIn(page, server.base, ADMIN, PASSWORD);
    await page.waitForURL(`${server.base}/`);
    await page.goto(`${server.base}/pages`);
    const second = (await page.context().cookies()).find((c) => c.name === "quire_session").value;
    assert.notEqual(first, second);
    const old = await fetch(`${server.base}/pages`, { headers: { cookie: `quire_session=${first}` }, redirect: "manual" });
    assert.equal(old.status, 303, "the old session's cookie is refused");
    const current = await fetch(`${server.base}/pages`, { headers: { cookie: `quire_session=${second}` }, redirect: "manual" });
    assert.equal(current.status, 200);
    await page.context().close();
  });
});

describe("an author", () => {
  test("sees no archive, restore or menu controls, and a forced menu write is refused", async () => {
    quire(server.data, ["user", "create", "--email", "ann@example.org", "--group", "author", "--password-stdin"], "author password 1\n");
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, server.base, "ann@example.org", "author password 1");
    await page.waitForURL(`${server.base}/`);
    await page.goto(`${server.base}/pages`);
    await page.getByRole("link", { name: "Media" }).click();
    await page.locator(".tile").first().getByRole("link").click();
    await page.getByRole("button", { name: "Save", exact: true }).waitFor();
    assert.equal(await page.getByRole("button", { name: /^Archive this image/ }).count(), 0);
    await page.getByRole("link", { name: "Navigation" }).click();
    await page.getByRole("link", { name: "Header" }).click();
    assert.equal(await page.getByRole("button", { name: "Add item" }).count(), 0);
    assert.equal(await page.getByRole("button", { name: /^Move .* up$/ }).count(), 0);
    const csrf = await page.locator('meta[name="csrf-token"]').getAttribute("content");
    const menu = page.url().split("/navigation/")[1];
    const forced = await page.evaluate(async ([menu, csrf]) => {
      const body = new URLSearchParams({ _csrf: csrf, label: "Forced", target_type: "url", target: "https://example.com/" });
      const r = await fetch(`/navigation/${menu}/items`, { method: "POST", body });
      return r.status;
    }, [menu, csrf]);
    assert.equal(forced, 403);
    await page.getByRole("link", { name: "History", exact: true }).click();
    await page.locator("table.list tbody tr a").first().click();
    assert.equal(await page.getByRole("button", { name: /Restore the record/ }).count(), 0);
    await context.close();
  });
});

describe("names and pickers", () => {
  test("history, a change, the approvals and the archive name people, tokens and records, with links", async () => {
    // A token makes a page and asks to archive it.
    const made = await api(server, "POST", "/api/v1/pages", { name: "Token made", slug: "token-made" });
    assert.equal(made.status, 201);
    const id = made.body.id;
    const asked = await api(server, "POST", "/api/v1/tools/deletePage/invoke", { ids: [id] });
    assert.ok(asked.body.confirmationId, JSON.stringify(asked.body));
    const page = await adminPage();
    await page.goto(`${server.base}/history?entity=page&entity_id=${id}`);
    await page.getByRole("heading", { name: "History of the page “Token made”" }).waitFor();
    const row = page.locator("table.list tbody tr").first();
    assert.match(await row.locator("td").nth(3).innerText(), /^API token “.+”$/, "the token by its name");
    assert.equal(await row.getByRole("link", { name: "Token made" }).getAttribute("href"), `/pages/${id}`);
    await noViolations(page, "a record's history");
    // Filtered by the token, chosen by its name.
    await page.goto(`${server.base}/history`);
    const by = page.getByLabel("By");
    const token = (await by.locator("option").allTextContents()).find((t) => t.startsWith("API token"));
    assert.ok(token, "the by filter offers the token by its name");
    await by.selectOption({ label: token });
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL(/actor=token%3A/);
    assert.doesNotMatch(await page.locator("main").innerText(), /\b(user|token):[0-9a-f]{8}/);
    await row.locator("a").first().click();
    await page.getByRole("heading", { name: /of the page Token made$/ }).waitFor();
    assert.match(await page.locator("main p.meta").first().innerText(), /by API token “.+” through rest/);
    await noViolations(page, "a change");

    await page.getByRole("link", { name: "Approvals", exact: true }).click();
    const approval = page.locator("section.approval", { hasText: "Token made" });
    assert.match(await approval.locator("h2 small").innerText(), /^asked by API token “.+” via rest$/);
    assert.equal(await approval.getByRole("link", { name: "Token made" }).getAttribute("href"), `/pages/${id}`);
    await noViolations(page, "approvals");
    await approval.getByRole("button", { name: "Approve" }).click();
    await page.getByText("Nothing is waiting for approval.").waitFor();
    // Approved, the token's call goes through.
    const done = await api(server, "POST", "/api/v1/tools/deletePage/invoke", { ids: [id], confirmationId: asked.body.confirmationId });
    assert.equal(done.status, 200, JSON.stringify(done.body));
    await page.getByRole("link", { name: "Archive", exact: true }).click();
    const archived = page.locator("section.archive-item", { hasText: "token-made" }).first();
    assert.match(await archived.locator("p.meta").innerText(), /^Archived .* by API token “.+”/);
    assert.doesNotMatch(await page.locator("main").innerText(), /\b(user|token):[0-9a-f]{8}/);
    assert.match(await archived.getByRole("link", { name: /^History of the page$/ }).getAttribute("href"), new RegExp(id));
    await noViolations(page, "the archive");
    await page.context().close();
  });

  test("a child page is made anywhere with the parent picker, searched by name", async () => {
    const page = await adminPage();
    await page.getByLabel("Name", { exact: true }).fill("Studio hours");
    const picker = page.getByLabel("Parent page", { exact: true });
    assert.equal(await picker.inputValue(), "", "a root page unless another is chosen");
    // The search box narrows the tree to the pages whose name holds the words.
    await page.getByLabel("Search the choices of Parent page").fill("team");
    const shown = await picker.locator("option:not([hidden])").allTextContents();
    assert.ok(shown.some((t) => t.includes("Our team (/team)")), shown.join(" | "));
    assert.ok(!shown.some((t) => t.startsWith("Pricing")), shown.join(" | "));
    await picker.selectOption({ label: "\u2003Our team (/team)" });
    await noViolations(page, "the new page form with its parent picker");
    await page.getByRole("button", { name: "Create page" }).click();
    await page.waitForURL(/\/pages\/[^?]+$/);
    const id = page.url().split("/pages/")[1];
    const team = (await api(server, "GET", "/api/v1/pages?limit=100")).body.items.find((p) => p.slug === "team");
    assert.equal((await api(server, "GET", `/api/v1/pages/${id}`)).body.parentId, team.id);
    // The editor shows the parent chosen, and the crumbs its place in the tree.
    assert.equal(await page.getByLabel("Parent page", { exact: true }).inputValue(), team.id);
    await page.locator("nav.crumbs", { hasText: "Our team" }).waitFor();
    await noViolations(page, "a page editor with its parent picker");
    await page.context().close();
  });

  test("an image field shows the chosen image's thumbnail, is cleared, and chosen again from the library", async () => {
    const page = await adminPage();
    await page.getByRole("link", { name: "Home", exact: true }).click();
    await page.locator("ol.sections a", { hasText: "Hero" }).first().click();
    const select = page.locator('[id="f-backgroundImage.url"]');
    const thumb = page.locator(".image-choice:has([id='f-backgroundImage.url']) img.thumb");
    assert.ok(await thumb.isVisible(), "the chosen image's thumbnail");
    assert.match(await select.locator("option:checked").innerText(), /dawn/i, "the image by its name");
    await noViolations(page, "a section with an image field");
    await page.getByRole("button", { name: "Clear Image from the library" }).click();
    assert.equal(await select.inputValue(), "");
    assert.ok(await thumb.isHidden(), "no thumbnail once cleared");
    await page.locator(".image-choice:has([id='f-backgroundImage.url']) button.pick").click();
    const tile = page.locator(".picker button[data-url]").first();
    const url = await tile.getAttribute("data-url");
    await tile.click();
    assert.equal(await select.inputValue(), url);
    assert.ok(await thumb.isVisible());
    assert.ok(await tile.isHidden(), "the library's thumbnails fold away once one is chosen");
    await shot(page, "image-picker");
    await page.context().close();
  });
});

describe("comfort", () => {
  test("at 390 px the navigation folds behind Menu, and the sidebar is a sheet that Esc closes", async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    await signIn(page, server.base, ADMIN, PASSWORD);
    await page.waitForURL(`${server.base}/`);
    await page.goto(`${server.base}/pages`);
    const nav = page.getByRole("navigation", { name: "Screens" });
    const menu = page.getByRole("button", { name: "Menu" });
    assert.ok(await nav.isHidden(), "the navigation is folded");
    assert.equal(await page.evaluate(() => document.documentElement.scrollWidth), 390, "nothing wider than the screen");
    await noViolations(page, "the page tree at 390 px");
    await shot(page, "pages-390");
    await menu.click();
    assert.equal(await menu.getAttribute("aria-expanded"), "true");
    await nav.getByRole("link", { name: "History" }).waitFor();
    await noViolations(page, "the menu open at 390 px");
    await page.keyboard.press("Escape");
    assert.ok(await nav.isHidden());
    assert.equal(await page.evaluate(() => document.activeElement.id), "nav-toggle");
    await menu.click();
    await nav.getByRole("link", { name: "History" }).click();
    await page.waitForURL(/\/history/);
    assert.equal(await page.evaluate(() => document.documentElement.scrollWidth), 390);
    await noViolations(page, "history at 390 px");

    // The editors fit the screen too.
    const home = (await api(server, "GET", "/api/v1/pages?limit=100")).body.items.find((p) => p.slug === "home");
    const hero = (await api(server, "GET", `/api/v1/pages/${home.id}/sections`)).body.items[0];
    const post = (await api(server, "GET", "/api/v1/collections/blog/entries?limit=1")).body.items[0];
    // An approval waiting, so its card is laid out at this width too.
    const waiting = await api(server, "POST", "/api/v1/pages", { name: "Narrow screen archive target with long words", slug: "narrow-archive-target" });
    const asked = await api(server, "POST", "/api/v1/tools/deletePage/invoke", { ids: [waiting.body.id] });
    assert.equal(asked.body.requiresConfirmation, true, JSON.stringify(asked.body));
    for (const path of [`/sections/${hero.id}`, `/entries/${post.id}`, "/media", "/approvals", "/", "/search?q=home"]) {
      await page.goto(`${server.base}${path}`);
      const wide = await page.evaluate(() =>
        [...document.querySelectorAll("body *")].filter((e) => e.getBoundingClientRect().right > 391).map((e) => e.outerHTML.slice(0, 120)).slice(0, 3));
      assert.ok((await page.evaluate(() => document.documentElement.scrollWidth)) <= 390, `${path} fits 390 px: ${wide.join(" | ")}`);
      await noViolations(page, `${path} at 390 px`);
    }

    // The sidebar covers the screen, and Esc gives it back.
    await page.getByRole("link", { name: "Quire", exact: true }).click();
    await page.waitForURL(`${server.base}/`);
    await page.goto(`${server.base}/pages`);
    await page.locator("table.list a", { hasText: "Home" }).click();
    await page.getByRole("button", { name: "AI assistant" }).click();
    const sheet = page.getByRole("complementary", { name: "AI assistant" });
    await sheet.waitFor();
    const box = await sheet.boundingBox();
    assert.deepEqual([box.x, box.y, box.width, box.height], [0, 0, 390, 844], "a sheet over the whole screen");
    await noViolations(page, "the sidebar as a sheet");
    await shot(page, "sidebar-390");
    await page.keyboard.press("Escape");
    assert.ok(await sheet.isHidden(), "Esc closes the sidebar");
    assert.equal(await page.evaluate(() => document.activeElement.id), "ai-toggle");
    await page.getByRole("button", { name: "AI assistant" }).click();
    await sheet.getByRole("button", { name: "Close the AI assistant" }).click();
    assert.ok(await sheet.isHidden());
    await context.close();
  });

  test("dark mode follows the system, the toggle is remembered, and every screen passes axe in it", async () => {
    const page = await adminPage();
    await page.emulateMedia({ colorScheme: "dark" });
    await page.reload();
    const background = () => page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
    assert.equal(await background(), "rgb(21, 23, 27)", "dark, as the system asks");
    const toggle = page.getByRole("button", { name: "Dark mode" });
    assert.equal(await toggle.getAttribute("aria-pressed"), "true");
    const home = (await api(server, "GET", "/api/v1/pages?limit=100")).body.items.find((p) => p.slug === "home");
    const hero = (await api(server, "GET", `/api/v1/pages/${home.id}/sections`)).body.items[0];
    const post = (await api(server, "GET", "/api/v1/collections/blog/entries?limit=1")).body.items[0];
    for (const path of ["/pages", `/pages/${home.id}`, `/sections/${hero.id}`, `/entries/${post.id}`, "/media", "/history", "/archive", "/approvals", "/releases", "/navigation", "/tokens"]) {
      await page.goto(`${server.base}${path}`);
      await noViolations(page, `${path} in dark mode`);
    }
    await page.goto(`${server.base}/sign-in`);
    await noViolations(page, "the sign-in form in dark mode");
    await page.goto(`${server.base}/pages/${home.id}`);
    await shot(page, "page-editor-dark");

    // Chosen light, it stays light on the next screen, whatever the system says.
    await toggle.click();
    assert.equal(await toggle.getAttribute("aria-pressed"), "false");
    assert.equal(await background(), "rgb(246, 247, 249)");
    await page.waitForTimeout(200);
    await page.goto(`${server.base}/history`);
    assert.equal(await page.locator("html").getAttribute("data-theme"), "light", "remembered");
    assert.equal(await background(), "rgb(246, 247, 249)");
    await noViolations(page, "history chosen light on a dark system");
    // Chosen dark again, which is the system's: it follows the system again.
    await page.getByRole("button", { name: "Dark mode" }).click();
    await page.waitForTimeout(200);
    await page.reload();
    assert.equal(await page.locator("html").getAttribute("data-theme"), null);
    assert.equal(await background(), "rgb(21, 23, 27)");
    await page.context().close();
  });

  test("every control shows where the focus is, and the icon is served", async () => {
    const page = await adminPage();
    const home = (await api(server, "GET", "/api/v1/pages?limit=100")).body.items.find((p) => p.slug === "home");
    await page.goto(`${server.base}/pages/${home.id}`);
    let seen = 0;
    for (let i = 0; i < 60; i++) {
      await page.keyboard.press("Tab");
      const focus = await page.evaluate(() => {
        const el = document.activeElement;
        const s = getComputedStyle(el);
        return { what: `${el.tagName}#${el.id}.${el.className}`, style: s.outlineStyle, width: parseFloat(s.outlineWidth) };
      });
      if (focus.what.startsWith("BODY")) continue;
      seen++;
      assert.ok(focus.style !== "none" && focus.width >= 2, `${focus.what} shows its focus (${focus.style} ${focus.width}px)`);
    }
    assert.ok(seen > 40, `${seen} controls were focused`);
    const icon = await fetch(`${server.base}/favicon.ico`);
    assert.equal(icon.status, 200);
    assert.equal(icon.headers.get("content-type"), "image/svg+xml");
    assert.equal(await page.locator('link[rel="icon"]').getAttribute("href"), "/favicon.ico");
    await page.context().close();
  });

  test("the heaviest screen with its stylesheet and script stays under 100 KB", async () => {
    const page = await adminPage();
    const home = (await api(server, "GET", "/api/v1/pages?limit=100")).body.items.find((p) => p.slug === "home");
    const hero = (await api(server, "GET", `/api/v1/pages/${home.id}/sections`)).body.items[0];
    const post = (await api(server, "GET", "/api/v1/collections/blog/entries?limit=1")).body.items[0];
    const cookie = (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join("; ");
    const size = async (path) => (await (await fetch(`${server.base}${path}`, { headers: { cookie } })).arrayBuffer()).byteLength;
    const css = await page.locator('link[rel="stylesheet"]').getAttribute("href");
    const js = await page.locator("script[src]").getAttribute("src");
    const assets = (await size(css)) + (await size(js));
    const screens = ["/pages", `/pages/${home.id}`, `/sections/${hero.id}`, `/entries/${post.id}`, "/media", "/history", "/releases"];
    let heaviest = 0;
    for (const path of screens) heaviest = Math.max(heaviest, await size(path));
    assert.ok(heaviest + assets < 100 * 1024, `heaviest screen ${heaviest} B + assets ${assets} B`);
    await page.context().close();
  });
});

describe("removing", () => {
  test("a page is archived from its editor after a question that counts its sections; its URL then says where it went", async () => {
    const made = await api(server, "POST", "/api/v1/pages", { name: "Contact us", slug: "contact-us" });
    const id = made.body.id;
    for (const body of ["Write to us", "Call us"]) {
      await api(server, "POST", `/api/v1/pages/${id}/sections`, { templateKey: "text", content: { body } });
    }
    const sectionId = (await api(server, "GET", `/api/v1/pages/${id}/sections`)).body.items[0].id;
    const page = await adminPage();
    await page.goto(`${server.base}/pages/${id}`);
    await page.getByRole("button", { name: "Archive this page…" }).click();
    await page.getByRole("heading", { name: "Archive the page Contact us and its 2 sections?" }).waitFor();
    assert.equal(await page.locator("ul.along li").count(), 2, "each section that goes along is named");
    await noViolations(page, "archiving a page, asked");
    await shot(page, "archive-confirm");
    // Cancel changes nothing.
    await page.getByRole("link", { name: "Cancel" }).click();
    await page.waitForURL(`${server.base}/pages/${id}`);
    assert.equal((await api(server, "GET", `/api/v1/pages/${id}`)).status, 200);

    await page.getByRole("button", { name: "Archive this page…" }).click();
    await page.getByRole("button", { name: "Archive the page" }).click();
    await page.waitForURL(`${server.base}/pages?bulk=archived`);
    await page.getByText("Archived, with what went along; the Archive can bring it back.").waitFor();
    assert.equal((await api(server, "GET", `/api/v1/pages/${id}`)).status, 404, "archived, as REST's DELETE does");
    assert.equal((await api(server, "GET", `/api/v1/sections/${sectionId}`)).status, 404, "its sections with it");

    // The editor's URL says the page is archived, not a bare 404.
    const gone = await page.goto(`${server.base}/pages/${id}`);
    assert.equal(gone.status(), 410);
    await page.getByRole("heading", { name: "The page “Contact us” is archived" }).waitFor();
    await noViolations(page, "an archived page's URL");
    const section = await page.goto(`${server.base}/sections/${sectionId}`);
    assert.equal(section.status(), 410);
    await page.getByText("along with the page “Contact us”").waitFor();
    assert.equal((await page.goto(`${server.base}/pages/no-such-page`)).status(), 404, "a page never here is still not found");

    // From there to the Archive, and back, asked first.
    await page.goto(`${server.base}/pages/${id}`);
    await page.getByRole("link", { name: "Restore it" }).click();
    await page.getByRole("heading", { name: "Restore the page Contact us and what was archived with it?" }).waitFor();
    await page.getByRole("button", { name: "Restore the page" }).click();
    await page.waitForURL(`${server.base}/archive`);
    assert.equal((await api(server, "GET", `/api/v1/pages/${id}/sections`)).body.items.length, 2);
    await page.context().close();
  });

  test("without JavaScript a section and a post are archived from their screens, each asked first", async () => {
    const made = await api(server, "POST", "/api/v1/pages", { name: "Plain archive", slug: "plain-archive" });
    const section = await api(server, "POST", `/api/v1/pages/${made.body.id}/sections`, { templateKey: "text", content: { body: "Going" } });
    const post = await api(server, "POST", "/api/v1/collections/blog/entries", { title: "Old news", slug: "old-news", content: { body: "Then." } });
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await signIn(page, server.base, ADMIN, PASSWORD);
    await page.waitForURL(/\/(pages)?$/);

    await page.goto(`${server.base}/sections/${section.body.id}`);
    await page.getByRole("button", { name: "Archive this section…" }).click();
    await page.getByRole("heading", { name: "Archive the section Text on Plain archive?" }).waitFor();
    assert.equal((await api(server, "GET", `/api/v1/sections/${section.body.id}`)).status, 200, "asking changes nothing");
    await page.getByRole("button", { name: "Archive the section" }).click();
    await page.waitForURL(`${server.base}/pages/${made.body.id}#sections-h`);
    assert.equal((await api(server, "GET", `/api/v1/sections/${section.body.id}`)).status, 404);
    await page.getByText("No sections yet.").waitFor();

    await page.goto(`${server.base}/entries/${post.body.id}`);
    await page.getByRole("button", { name: "Archive this post…" }).click();
    await page.getByRole("heading", { name: "Archive the entry Old news?" }).waitFor();
    await page.getByRole("button", { name: "Archive the entry" }).click();
    await page.waitForURL(`${server.base}/collections/blog?bulk=archived`);
    assert.equal((await api(server, "GET", `/api/v1/entries/${post.body.id}`)).status, 404);
    assert.equal(await page.getByRole("link", { name: "Old news" }).count(), 0, "no longer listed");

    // A menu item, with the items under it.
    const top = await api(server, "POST", "/api/v1/navigations/footer/items", { label: "Resources", targetType: "url", url: "https://example.com/r" });
    assert.equal(top.status, 201, JSON.stringify(top.body));
    await api(server, "POST", "/api/v1/navigations/footer/items", { label: "Guides", targetType: "url", url: "https://example.com/g", parentId: top.body.id });
    await page.goto(`${server.base}/nav-items/${top.body.id}`);
    await page.getByRole("button", { name: "Archive this item…" }).click();
    await page.getByRole("heading", { name: "Archive the menu item Resources and its 1 item under it?" }).waitFor();
    await page.getByRole("button", { name: "Archive the menu item" }).click();
    await page.waitForURL(/\/navigation\//);
    assert.equal((await api(server, "GET", `/api/v1/nav-items/${top.body.id}`)).status, 404);
    assert.equal((await page.goto(`${server.base}/nav-items/${top.body.id}`)).status(), 410);
    await page.getByRole("heading", { name: "The menu item “Resources” is archived" }).waitFor();
    await context.close();
  });

  test("restoring a page's revision brings its sections back as they were then", async () => {
    const made = await api(server, "POST", "/api/v1/pages", { name: "Pricing", slug: "pricing-rev" });
    const id = made.body.id;
    const first = await api(server, "POST", `/api/v1/pages/${id}/sections`, { templateKey: "text", content: { body: "Three tiers" } });
    const gone = await api(server, "POST", `/api/v1/pages/${id}/sections`, { templateKey: "text", content: { body: "Ask us" } });
    await api(server, "PATCH", `/api/v1/pages/${id}`, { name: "Pricing 2026" });
    // Since: a section rewritten, one archived, one added, the page renamed.
    await api(server, "PATCH", `/api/v1/sections/${first.body.id}`, { content: { body: "Two tiers" } });
    await api(server, "DELETE", `/api/v1/sections/${gone.body.id}`);
    await api(server, "POST", `/api/v1/pages/${id}/sections`, { templateKey: "text", content: { body: "Added later" } });
    await api(server, "PATCH", `/api/v1/pages/${id}`, { name: "Pricing 2027" });

    const page = await adminPage();
    await page.goto(`${server.base}/history?entity=page&entity_id=${id}`);
    const rename = page.locator("table.list tbody tr").nth(1);
    await rename.getByRole("link").first().click();
    await page.getByRole("button", { name: "Restore the record as this change left it…" }).click();
    await page.getByText("Its sections come back as they were then too").waitFor();
    await page.getByRole("button", { name: "Restore this revision" }).click();
    await page.getByRole("heading", { name: /^revert/ }).waitFor();

    assert.equal((await api(server, "GET", `/api/v1/pages/${id}`)).body.name, "Pricing 2026");
    const sections = (await api(server, "GET", `/api/v1/pages/${id}/sections`)).body.items;
    const ids = sections.map((s) => s.id).sort();
    assert.deepEqual(ids, [first.body.id, gone.body.id].sort(), "the archived one is back, the new one gone");
    const again = await api(server, "GET", `/api/v1/sections/${first.body.id}`);
    assert.equal(again.body.content.body, "Three tiers");
    await page.context().close();
  });
});

describe("finding", () => {
  test("sign-in lands on a dashboard of approvals, recent changes, unpublished drafts and images without alt text", async () => {
    await api(server, "POST", "/api/v1/pages", { name: "Dashboard draft", slug: "dashboard-draft" });
    // A destructive call waiting for a person.
    const doomed = await api(server, "POST", "/api/v1/pages", { name: "Dashboard doomed", slug: "dashboard-doomed" });
    const asked = await api(server, "POST", "/api/v1/tools/deletePage/invoke", { ids: [doomed.body.id] });
    assert.equal(asked.body.requiresConfirmation, true, JSON.stringify(asked.body));
    // An image uploaded without alt text, once it is ready.
    const form = new FormData();
    form.append("file", new Blob([pngOf([9, 99, 199])], { type: "image/png" }), "no-words.png");
    const uploaded = await fetch(`${server.base}/api/v1/images`, { method: "POST", headers: { authorization: `Bearer ${server.token}` }, body: form });
    assert.equal(uploaded.status, 202);
    const imageId = (await uploaded.json()).id;
    for (let i = 0; i < 100 && (await api(server, "GET", `/api/v1/images/${imageId}`)).body.status !== "completed"; i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await signIn(page, server.base, ADMIN, PASSWORD);
    await page.waitForURL(`${server.base}/`);
    await page.getByRole("heading", { name: "Dashboard", exact: true }).waitFor();
    const drafts = page.locator("section", { has: page.getByRole("heading", { name: "Drafts not on the site" }) });
    assert.equal(await drafts.getByRole("link", { name: "Dashboard draft" }).count(), 1, "a draft never published is listed by name");
    const everyone = page.locator("section", { has: page.getByRole("heading", { name: "Everyone's recent changes" }) });
    await everyone.getByRole("link", { name: "Dashboard draft" }).first().waitFor();
    assert.doesNotMatch(await everyone.innerText(), /token:[0-9a-f-]{8}/, "people and tokens by name, not id");
    await page.getByRole("heading", { name: "My recent changes" }).waitFor();
    const waiting = page.locator("section", { has: page.getByRole("heading", { name: "Waiting for approval" }) });
    assert.match(await waiting.innerText(), /dashboard-doomed|Dashboard doomed/, "the pending call says what it would archive");
    assert.equal(await waiting.getByRole("link", { name: "Answer them in Approvals" }).getAttribute("href"), "/approvals");
    const noAlt = page.locator("section", { has: page.getByRole("heading", { name: "Images without alt text" }) });
    assert.equal(await noAlt.getByRole("link", { name: "no-words.png" }).getAttribute("href"), `/media/${imageId}`);
    // A change of mine shows under mine.
    await page.goto(`${server.base}/pages`);
    await page.getByLabel("Name").fill("Mine today");
    await page.getByRole("button", { name: "Create page" }).click();
    await page.getByRole("heading", { name: /Mine today/ }).waitFor();
    await page.getByRole("link", { name: "Dashboard", exact: true }).click();
    const mine = page.locator("section", { has: page.getByRole("heading", { name: "My recent changes" }) });
    await mine.getByRole("link", { name: "Mine today" }).waitFor();
    await noViolations(page, "dashboard");
    await shot(page, "dashboard");
    await context.close();
  });

  test("the pages and posts lists find by the tools' search; / and Ctrl+K open the search across the site", async () => {
    await api(server, "POST", "/api/v1/pages", { name: "Zeppelin tours", slug: "zeppelin-tours" });
    await api(server, "POST", "/api/v1/collections/blog/entries", { title: "Zeppelin diary", slug: "zeppelin-diary", content: { body: "Up high." } });
    const page = await adminPage();
    await page.getByLabel("Find pages").fill("zeppelin");
    await page.getByRole("button", { name: "Find", exact: true }).click();
    await page.getByRole("heading", { name: "Pages matching “zeppelin”" }).waitFor();
    assert.equal(await page.locator("table.list tbody tr").count(), 1);
    await page.getByRole("link", { name: "Zeppelin tours" }).waitFor();
    await noViolations(page, "pages found");
    await page.getByLabel("Find pages").fill("xyzzyqq");
    await page.getByRole("button", { name: "Find", exact: true }).click();
    await page.getByText("No page matches “xyzzyqq”.").waitFor();

    await page.goto(`${server.base}/collections/blog?q=zeppelin`);
    await page.getByRole("link", { name: "Zeppelin diary" }).waitFor();
    assert.equal(await page.locator("table.list tbody tr").count(), 1);
    await noViolations(page, "posts found");

    // `/` outside a field, then Ctrl+K inside one, put the cursor in the header's search.
    await page.goto(`${server.base}/media`);
    await page.keyboard.press("/");
    assert.equal(await page.evaluate(() => document.activeElement.id), "find-q");
    await page.getByLabel("Find anything").fill("");
    await page.locator("body").click();
    await page.keyboard.press("Control+k");
    assert.equal(await page.evaluate(() => document.activeElement.id), "find-q");
    await page.keyboard.type("zeppelin");
    await page.keyboard.press("Enter");
    await page.waitForURL(`${server.base}/search?q=zeppelin`);
    const pages = page.locator("section", { has: page.getByRole("heading", { name: "Pages" }) });
    await pages.getByRole("link", { name: "Zeppelin tours" }).waitFor();
    const entries = page.locator("section", { has: page.getByRole("heading", { name: "Posts and entries" }) });
    await entries.getByRole("link", { name: "Zeppelin diary" }).waitFor();
    await noViolations(page, "search");
    await shot(page, "search");
    // Screens are found by name, notes by their words (the demo vault's kickoff names its attendees).
    await page.goto(`${server.base}/search?q=history`);
    const screens = page.locator("section", { has: page.getByRole("heading", { name: "Screens" }) });
    assert.equal(await screens.getByRole("link", { name: "History" }).getAttribute("href"), "/history");
    await page.goto(`${server.base}/search?q=attendees`);
    const notes = page.locator("section", { has: page.getByRole("heading", { name: "Notes" }) });
    await notes.getByRole("link", { name: "meetings/2026-11-02 kickoff.md" }).waitFor();
    assert.match(await notes.innerText(), /Attendees: Ana, Bo, Chen/);
    await page.context().close();
  });

  test("bulk actions publish and archive the chosen pages in one request each, archiving asked first", async () => {
    const ids = [];
    for (const name of ["Bulk alpha", "Bulk beta"]) {
      ids.push((await api(server, "POST", "/api/v1/pages", { name, slug: name.toLowerCase().replace(" ", "-") })).body.id);
    }
    const page = await adminPage();
    await page.goto(`${server.base}/pages?q=bulk`);
    await page.getByRole("checkbox", { name: "Choose Bulk alpha" }).check();
    await page.getByRole("checkbox", { name: "Choose Bulk beta" }).check();
    await page.getByLabel("With the chosen pages").selectOption("publish");
    let posts = 0;
    page.on("request", (r) => { if (r.method() === "POST") posts += 1; });
    await page.getByRole("button", { name: "Apply" }).click();
    await page.getByText("Published 2 of the chosen pages.").waitFor();
    assert.equal(posts, 1, "one request");
    for (const id of ids) {
      assert.equal((await api(server, "GET", `/api/v1/pages/${id}/publication`)).body.published ?? true, true);
    }
    const delivered = await api(server, "GET", "/api/v1/delivery/pages/bulk-alpha");
    assert.equal(delivered.status, 200, "on the site");

    await page.goto(`${server.base}/pages?q=bulk`);
    await page.getByRole("checkbox", { name: "Choose Bulk alpha" }).check();
    await page.getByRole("checkbox", { name: "Choose Bulk beta" }).check();
    await page.getByLabel("With the chosen pages").selectOption("archive");
    await page.getByRole("button", { name: "Apply" }).click();
    await page.getByRole("heading", { name: /^Archive 2 pages: “Bulk (alpha|beta)”, “Bulk (alpha|beta)”\?$/ }).waitFor();
    assert.equal((await api(server, "GET", `/api/v1/pages/${ids[0]}`)).status, 200, "asking changes nothing");
    await noViolations(page, "bulk archive, asked");
    await page.getByRole("button", { name: "Archive the pages" }).click();
    await page.getByText("Archived 2 of the chosen pages.").waitFor();
    for (const id of ids) assert.equal((await api(server, "GET", `/api/v1/pages/${id}`)).status, 404);

    // Posts the same way, from their collection's list.
    const post = await api(server, "POST", "/api/v1/collections/blog/entries", { title: "Bulk post", slug: "bulk-post", content: { body: "Out now." } });
    await page.goto(`${server.base}/collections/blog?q=bulk`);
    await page.getByRole("checkbox", { name: "Choose Bulk post" }).check();
    await page.getByLabel("With the chosen posts").selectOption("publish");
    await page.getByRole("button", { name: "Apply" }).click();
    await page.getByText("Published 1 of the chosen posts.").waitFor();
    const onSite = await fetch(`${server.base}/api/v1/delivery/collections/blog/entries`).then((r) => r.json());
    assert.ok(onSite.items.some((e) => e.slug === "bulk-post"), "on the site");
    await noViolations(page, "posts after a bulk action");
    assert.equal((await api(server, "GET", `/api/v1/entries/${post.body.id}`)).body.status, "published");
    await page.context().close();
  });
});
