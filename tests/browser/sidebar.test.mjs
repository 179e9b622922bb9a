// The AI sidebar in a real browser, against a scripted model: a turn that
// adds a section to the page on screen (which refreshes in place), an
// approval answered inline (approved — the executed call, what it changed
// and its undo shown, the screen following — then rejected with a reason
// the model is told), a reopened conversation (each answer once, a waiting
// approval answerable there), undoing a turn, an agent in release mode
// whose turn's release is shown under the turn and published (or
// discarded) from there, and axe-core on the open sidebar.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import AxeBuilder from "@axe-core/playwright";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { api, chooseAdminPassword, launch, signIn, startServer } from "./harness.mjs";
import { startFakeModel } from "./fake-model.mjs";

const PASSWORD = "a long admin password";
const SHOTS = process.env.SCREENSHOTS === "1"
  ? path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "docs", "screenshots")
  : null;
let server;
let model;
let browser;

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
});

after(async () => {
  await browser?.close();
  await server?.stop();
  await model?.close();
});

/** A new page (through the API) and a signed-in admin on its editor with the sidebar open. */
async function onPage(name) {
  const slug = name.toLowerCase().replace(/[^a-z0-9]+/g, "-");
  const created = await api(server, "POST", "/api/v1/pages", { name, slug });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  await signIn(page, server.base, "admin@localhost", PASSWORD);
  await page.waitForURL(`${server.base}/`);
  await page.goto(`${server.base}/pages/${created.body.id}`);
  await page.getByRole("button", { name: "AI assistant" }).click();
  await page.getByLabel("Agent", { exact: true }).selectOption("editor");
  return { page, id: created.body.id };
}

/** Another tab of the same person, with the conversation that began with `first` reopened from the history. */
async function reopen(page, first) {
  const fresh = await page.context().newPage();
  await fresh.goto(`${server.base}/pages`);
  await fresh.getByRole("button", { name: "AI assistant" }).click();
  await fresh.getByRole("button", { name: "New conversation" }).click();
  await fresh.locator("#ai-history summary").click();
  await fresh.locator("#ai-sessions button", { hasText: first }).click();
  return fresh;
}

async function say(page, text) {
  await page.getByLabel("Message to the agent").fill(text);
  await page.getByRole("button", { name: "Send" }).click();
}

describe("the AI sidebar", () => {
  test("a turn adds a section to the page on screen, which updates; the turn can be undone", async () => {
    const { page, id } = await onPage("Agent made");
    assert.match(await page.locator("#ai-context").innerText(), /Agent made/);
    await say(page, `add a text section to ${id}`);
    await page.locator(".ai-assistant", { hasText: "I added a text section." }).waitFor();
    // The page on screen shows the new section without a reload.
    await page.locator("ol.sections").getByText("From the agent").waitFor();
    await page.locator(".ai-tool summary", { hasText: /^⚙ createSection / }).waitFor();
    const sections = await api(server, "GET", `/api/v1/pages/${id}/sections`);
    assert.equal(sections.body.items.length, 1);
    // What the turn changed is named, with a link: a section by its template and page, never by its id.
    const changed = page.locator(".ai-after").getByRole("link", { name: /^section “.+ on Agent made”$/ });
    await changed.waitFor();
    assert.equal(await changed.getAttribute("href"), `/sections/${sections.body.items[0].id}`);
    // The model got the screen's record as the turn's context.
    const last = model.requests.at(-1);
    assert.match(JSON.stringify(last.messages), new RegExp(id));

    await new AxeBuilder({ page }).include("#ai").analyze().then((r) => {
      const bad = r.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
      assert.deepEqual(bad.map((v) => v.id), [], "sidebar accessibility");
    });

    await page.getByRole("button", { name: "Undo this turn" }).click();
    await page.locator(".ai-note", { hasText: "Undone: 1 change(s) reverted." }).waitFor();
    const afterUndo = await api(server, "GET", `/api/v1/pages/${id}/sections`);
    assert.equal(afterUndo.body.items.length, 0, "the section the turn made is archived again");
    await page.locator("ol.sections").getByText("No sections yet.").waitFor();
    await page.context().close();
  });

  test("a destructive call waits for the person: the inline widget approves it and the turn goes on", async () => {
    const { page, id } = await onPage("Old campaign");
    await say(page, `archive page ${id}`);
    const widget = page.getByRole("group", { name: "Approval for deletePage" });
    await widget.waitFor();
    assert.match(await widget.locator(".ai-args").innerText(), new RegExp(id));
    assert.equal((await api(server, "GET", `/api/v1/pages/${id}`)).status, 200, "nothing archived before the answer");
    if (SHOTS) await page.screenshot({ path: path.join(SHOTS, "sidebar-approval.png") });
    await widget.getByRole("button", { name: "Approve" }).click();
    await page.locator(".ai-assistant", { hasText: "The page is archived." }).waitFor();
    assert.equal((await api(server, "GET", `/api/v1/pages/${id}`)).status, 404);
    // The executed call, what it changed, and the way back.
    await widget.locator(".ai-approval-status", { hasText: /^Done: Archived 1 page\(s\)/ }).waitFor();
    await page.locator(".ai-after", { hasText: "Changed: page “old-campaign”" }).waitFor();
    // The screen no longer shows the archived page as it was.
    await page.locator("#main h1", { hasText: "Archived" }).waitFor();
    await page.getByRole("button", { name: "Undo this turn" }).click();
    await page.locator(".ai-note", { hasText: /^Undone: \d+ change\(s\) reverted\.$/ }).waitFor();
    assert.equal((await api(server, "GET", `/api/v1/pages/${id}`)).status, 200, "the undo brought the page back");
    // And the screen returns with it.
    await page.locator("#main h1", { hasText: "Old campaign" }).waitFor();

    // Reopened from the history, the conversation shows each answer once
    // and the approval the turn waited for.
    const fresh = await reopen(page, `archive page ${id}`);
    await fresh.locator(".ai-user", { hasText: `archive page ${id}` }).waitFor();
    await fresh.locator(".ai-assistant", { hasText: "The page is archived." }).first().waitFor();
    await fresh.waitForTimeout(500);
    assert.equal(await fresh.locator(".ai-assistant", { hasText: "The page is archived." }).count(), 1, "said once");
    await page.context().close();
  });

  test("a reopened conversation that waits for an approval shows it, and it can be answered there", async () => {
    const { page, id } = await onPage("Spring sale");
    await say(page, `archive page ${id}`);
    await page.getByRole("group", { name: "Approval for deletePage" }).waitFor();
    const fresh = await reopen(page, `archive page ${id}`);
    const widget = fresh.getByRole("group", { name: "Approval for deletePage" });
    await widget.waitFor();
    await widget.getByRole("button", { name: "Approve" }).click();
    await fresh.locator(".ai-assistant", { hasText: "The page is archived." }).waitFor();
    assert.equal((await api(server, "GET", `/api/v1/pages/${id}`)).status, 404);
    await page.context().close();
  });

  test("rejecting with a reason leaves the record alone and tells the model why", async () => {
    const { page, id } = await onPage("Press kit");
    await say(page, `archive page ${id}`);
    const widget = page.getByRole("group", { name: "Approval for deletePage" });
    await widget.waitFor();
    await widget.getByLabel("Reason (told to the agent if you reject)").fill("journalists still use it");
    await widget.getByRole("button", { name: "Reject" }).click();
    await page.locator(".ai-assistant", { hasText: "journalists still use it" }).waitFor();
    assert.equal((await api(server, "GET", `/api/v1/pages/${id}`)).status, 200);
    const told = model.requests.at(-1).messages.filter((m) => m.role === "tool").map((m) => m.content).join("\n");
    assert.match(told, /journalists still use it/);
    await page.context().close();
  });

  test("an agent in release mode leaves its turn's changes in a release shown under the turn, published from there", async () => {
    const mode = await api(server, "PATCH", "/api/v1/agents/editor", { writeMode: "release" });
    assert.equal(mode.status, 200, JSON.stringify(mode.body));
    try {
      const { page, id } = await onPage("Our people");
      const published = await api(server, "POST", `/api/v1/pages/${id}/publish`);
      assert.equal(published.status, 200, JSON.stringify(published.body));
      const delivered = async () => (await fetch(`${server.base}/api/v1/delivery/pages/our-people`).then((r) => r.json())).name;

      await say(page, `rename page ${id} to Our team`);
      await page.locator(".ai-assistant", { hasText: "I renamed the page to Our team." }).waitFor();
      const release = page.locator("#ai li.ai-release");
      await release.waitFor();
      assert.match(await release.locator(".ai-release-title").innerText(), /^Release Editor: .*turn 1 open$/);
      const row = release.locator("table.ai-diff tbody tr", { has: page.locator("th", { hasText: /^name$/ }) });
      assert.equal(await row.locator("pre.before").innerText(), "Our people");
      assert.equal(await row.locator("pre.after").innerText(), "Our team");
      assert.ok(await release.getByRole("link", { name: "Schedule…" }).isVisible());
      assert.ok(await release.getByRole("link", { name: "Open the release" }).isVisible());
      // Nothing moved: neither the site nor the draft.
      assert.equal(await delivered(), "Our people");
      assert.equal((await api(server, "GET", `/api/v1/pages/${id}`)).body.name, "Our people");

      const axe = await new AxeBuilder({ page }).include("#ai").analyze();
      assert.deepEqual(axe.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`), [], "sidebar with a release");
      if (SHOTS) await page.screenshot({ path: path.join(SHOTS, "sidebar-release.png") });

      // Shown again after a reload, under its turn.
      await page.reload();
      const again = page.locator("#ai li.ai-release");
      await again.waitFor();
      assert.equal(await again.locator("table.ai-diff pre.after").first().innerText(), "Our team");

      let asked = "";
      page.on("dialog", (d) => { asked = d.message(); d.accept(); });
      await again.getByRole("button", { name: "Publish" }).click();
      await page.locator("#ai .ai-release-status", { hasText: "Published: this turn's changes are on the site." }).waitFor();
      assert.match(asked, /^Publish the 1 document\(s\) of “Editor: .*” on the site now\?$/);
      assert.equal(await delivered(), "Our team");
      assert.match(await page.locator("#ai li.ai-release .ai-release-title").innerText(), /published$/);
      assert.equal(await page.locator("#ai li.ai-release").getByRole("button", { name: "Publish" }).count(), 0);
      // The page on screen shows it published.
      await page.locator("#main h1", { hasText: "Our team" }).waitFor();

      // A second turn's release, discarded: the site stays as it is.
      await say(page, `rename page ${id} to Crew`);
      await page.locator(".ai-assistant", { hasText: "I renamed the page to Crew." }).waitFor();
      const second = page.locator("#ai li.ai-release").nth(1);
      await second.waitFor();
      await second.getByRole("button", { name: "Discard" }).click();
      await second.locator(".ai-release-status", { hasText: "Discarded" }).waitFor();
      assert.match(await second.locator(".ai-release-title").innerText(), /discarded$/);
      assert.equal(await delivered(), "Our team");
      assert.equal((await api(server, "GET", `/api/v1/pages/${id}`)).body.name, "Our team");

      // A third turn staged in a release the person chose in the sidebar.
      const chosen = await api(server, "POST", "/api/v1/releases", { name: "Autumn launch" });
      assert.equal(chosen.status, 201, JSON.stringify(chosen.body));
      await page.reload();
      const stageIn = page.getByLabel("Stage in");
      await stageIn.waitFor();
      await page.locator("#ai-release option", { hasText: "Autumn launch" }).waitFor({ state: "attached" });
      await stageIn.selectOption({ label: "Autumn launch" });
      await say(page, `rename page ${id} to Our folk`);
      await page.locator(".ai-assistant", { hasText: "I renamed the page to Our folk." }).waitFor();
      const third = page.locator("#ai li.ai-release").nth(2);
      await third.waitFor();
      assert.match(await third.locator(".ai-release-title").innerText(), /^Release Autumn launch open$/);
      const held = await api(server, "GET", `/api/v1/releases/${chosen.body.id}`);
      assert.deepEqual(held.body.items.map((i) => i.id), [id]);
      assert.equal(await delivered(), "Our team");
      await api(server, "POST", `/api/v1/releases/${chosen.body.id}/discard`);
      await page.context().close();
    } finally {
      await api(server, "PATCH", "/api/v1/agents/editor", { writeMode: "draft" });
    }
  });

  test("the record's AI actions start a turn with their task and the record as context", async () => {
    const { page, id } = await onPage("Our crew");
    await page.getByRole("button", { name: "Summarize" }).click();
    await page.locator(".ai-assistant", { hasText: "Summary of the page: a short one." }).waitFor();
    let asked = model.requests.at(-1);
    assert.match(JSON.stringify(asked.messages), new RegExp(id), "the record is the turn's context");
    await page.getByLabel("Language").selectOption({ label: "German" });
    await page.getByRole("button", { name: "Translate" }).click();
    await page.locator(".ai-assistant", { hasText: "into German as a copy ending in -de." }).waitFor();
    asked = model.requests.at(-1);
    const user = asked.messages.filter((m) => m.role === "user").at(-1).content;
    assert.match(user, /^Translate this page into German\./);
    await page.context().close();
  });
});
