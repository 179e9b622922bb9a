// The AI sidebar in a real browser, against a scripted model: a turn that
// adds a section to the page on screen (which refreshes in place, the
// banner naming the record as it now is), the open conversation following
// the person to another screen and through a reload (each item once, its
// undo there), a failed call marked with its error, an approval asked in
// the person's words with the exact call one click away (approved — the
// executed call, what it changed and its undo shown, the screen following
// — then rejected with a reason the model is told), a reopened
// conversation showing every call, result, approval and undo as they
// happened (and a waiting approval answerable there), an agent in release
// mode whose turn's release is shown under the turn and published (or
// discarded) from there, a person's approval preferences (pages: always
// ask) making the agent's updatePage wait for the Approve button, and
// axe-core with no violation on the open sidebar, with an approval waiting
// and with a result expanded, and on My approvals.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import AxeBuilder from "@axe-core/playwright";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { api, chooseAdminPassword, launch, noViolations, signIn, startServer } from "./harness.mjs";
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

/** A page with one text section (through the API). */
async function pageWithSection(name) {
  const slug = name.toLowerCase().replace(/[^a-z0-9]+/g, "-");
  const created = await api(server, "POST", "/api/v1/pages", { name, slug });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const section = await api(server, "POST", `/api/v1/pages/${created.body.id}/sections`, {
    templateKey: "text",
    content: { heading: "Write to us", body: "We answer within a day." },
  });
  assert.equal(section.status, 201, JSON.stringify(section.body));
  return created.body.id;
}

/** The sidebar's log as a list of its items: kind and text, in order. */
async function logItems(page) {
  return page.locator("#ai-log > li").evaluateAll((items) => items.map((li) => {
    const kind = ["ai-user", "ai-assistant", "ai-tool-row", "ai-approval", "ai-after", "ai-note", "ai-release"]
      .find((c) => li.classList.contains(c)) ?? li.className;
    const text = kind === "ai-tool-row" ? li.querySelector("summary").textContent.split(" ").slice(0, 2).join(" ") : li.innerText;
    return `${kind}${li.classList.contains("ai-failed") ? " failed" : ""}: ${text.replace(/\s+/g, " ").trim()}`;
  }));
}

/** Waits a little, so a stream that replays what is shown would have done it. */
const settle = (page) => page.waitForTimeout(600);

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
      assert.deepEqual(r.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`), [], "sidebar accessibility");
    });

    await page.getByRole("button", { name: "Undo this turn" }).click();
    await page.locator(".ai-note", { hasText: "Undone: 1 change(s) reverted." }).waitFor();
    const afterUndo = await api(server, "GET", `/api/v1/pages/${id}/sections`);
    assert.equal(afterUndo.body.items.length, 0, "the section the turn made is archived again");
    await page.locator("ol.sections").getByText("No sections yet.").waitFor();
    await page.context().close();
  });

  test("the open conversation follows the person to another screen and through a reload, each item once", async () => {
    const { page, id } = await onPage("Moving on");
    await say(page, `add a text section to ${id}`);
    await page.locator(".ai-assistant", { hasText: "I added a text section." }).waitFor();
    await page.locator(".ai-after").getByRole("link", { name: /^section “.+ on Moving on”$/ }).waitFor();
    const asShown = await logItems(page);
    assert.deepEqual(asShown.map((i) => i.split(":")[0]), ["ai-user", "ai-tool-row", "ai-tool-row", "ai-assistant", "ai-after"], asShown.join("\n"));

    // Another screen: the sidebar is open on the same conversation, as it was.
    await page.getByRole("navigation", { name: "Screens" }).getByRole("link", { name: "Pages", exact: true }).click();
    await page.waitForURL(`${server.base}/pages`);
    await page.locator("#ai-log .ai-assistant", { hasText: "I added a text section." }).waitFor();
    await settle(page);
    assert.ok(await page.locator("#ai").isVisible(), "the sidebar stays open");
    assert.deepEqual(await logItems(page), asShown, "the conversation as it was shown, each item once");
    // The call's result is there, one click away.
    await page.locator(`#ai-log .ai-tool-row[data-name="createSection"]`).locator("summary").click();
    assert.match(await page.locator(`#ai-log .ai-tool-row[data-name="createSection"]`).locator("pre.ai-result").innerText(), /"success": true/);
    await noViolations(page, "the page list with the sidebar and a result expanded");

    // And through a reload.
    await page.reload();
    await page.locator("#ai-log .ai-assistant", { hasText: "I added a text section." }).waitFor();
    await settle(page);
    assert.deepEqual(await logItems(page), asShown, "the same after a reload");

    // The conversation goes on here: the model reads it whole.
    await say(page, "what can you do?");
    await page.locator(".ai-assistant", { hasText: "I can add sections and archive pages." }).waitFor();
    const told = JSON.stringify(model.requests.at(-1).messages);
    assert.match(told, new RegExp(`add a text section to ${id}`), "the same session, continued");

    // The turn is undone from this other screen, and back on the page the
    // conversation says so where it happened.
    await page.getByRole("button", { name: "Undo this turn" }).click();
    await page.locator(".ai-note", { hasText: "Undone: 1 change(s) reverted." }).waitFor();
    assert.equal((await api(server, "GET", `/api/v1/pages/${id}/sections`)).body.items.length, 0);
    await page.goto(`${server.base}/pages/${id}`);
    await page.locator("#ai-log .ai-note", { hasText: "Undone: 1 change(s) reverted." }).waitFor();
    await settle(page);
    const back = await logItems(page);
    assert.deepEqual(back.map((i) => i.split(":")[0]), [
      "ai-user", "ai-tool-row", "ai-tool-row", "ai-assistant", "ai-after", "ai-user", "ai-assistant", "ai-note",
    ], back.join("\n"));
    assert.equal(await page.getByRole("button", { name: "Undo this turn" }).count(), 0, "an undone turn offers no undo");
    await page.context().close();
  });

  test("a failed call is marked as failed with its error, as it happens and when shown again", async () => {
    const { page } = await onPage("Lost and found");
    await say(page, "add a section to the missing page");
    await page.locator(".ai-assistant", { hasText: "I could not add it: page no-such-page not found" }).waitFor();
    const failed = page.locator("#ai-log .ai-tool-row.ai-failed");
    assert.equal(await failed.count(), 1, "only the failed call is marked");
    // The error is said on the call's line, without opening anything.
    const said = failed.locator(".ai-error");
    assert.ok(await said.isVisible());
    assert.equal(await said.innerText(), "✗ createSection failed: page no-such-page not found");
    assert.equal(await page.locator("#ai-log .ai-tool-row:not(.ai-failed)", { hasText: "searchTools" }).count(), 1);
    await failed.locator("summary").click();
    assert.match(await failed.locator("pre.ai-result").innerText(), /"errorCode": "NOT_FOUND"/);
    await noViolations(page, "the sidebar with a failed result expanded");

    await page.reload();
    const again = page.locator("#ai-log .ai-tool-row.ai-failed");
    await again.waitFor();
    assert.equal(await again.count(), 1);
    assert.equal(await again.locator(".ai-error").innerText(), "✗ createSection failed: page no-such-page not found");
    assert.equal(await page.locator("#ai-log .ai-tool-row:not(.ai-failed)", { hasText: "searchTools" }).count(), 1);
    await again.locator("summary").click();
    await noViolations(page, "the reopened sidebar with a failed result expanded");
    await page.context().close();
  });

  test("an approval is asked in the person's words with the exact call one click away; approved inline, the turn goes on", async () => {
    const id = await pageWithSection("Contact desk");
    const { page } = await onPage("Bystander");
    await say(page, `archive page ${id}`);
    const widget = page.getByRole("group", { name: "Archive the page Contact desk and its 1 section?" });
    await widget.waitFor();
    assert.equal(await widget.getByRole("link", { name: "Contact desk", exact: true }).getAttribute("href"), `/pages/${id}`);
    await widget.getByRole("link", { name: "Text on Contact desk" }).waitFor();
    const words = await widget.innerText();
    assert.doesNotMatch(words, /confirmationId|call again|Would archive/, words);
    // The exact call, one click away.
    const exact = widget.locator("pre.ai-args");
    assert.equal(await exact.isVisible(), false);
    await widget.getByText("The exact call: deletePage").click();
    assert.deepEqual(JSON.parse(await exact.innerText()), { ids: [id] });
    assert.equal((await api(server, "GET", `/api/v1/pages/${id}`)).status, 200, "nothing archived before the answer");
    await noViolations(page, "the sidebar with an approval waiting and its call expanded");
    if (SHOTS) await page.screenshot({ path: path.join(SHOTS, "sidebar-approval.png") });
    await widget.getByRole("button", { name: "Approve" }).click();
    await page.locator(".ai-assistant", { hasText: "The page is archived." }).waitFor();
    assert.equal((await api(server, "GET", `/api/v1/pages/${id}`)).status, 404);
    // The executed call, what it changed, and the way back.
    await widget.locator(".ai-approval-status", { hasText: /^Done: Archived 1 page\(s\)/ }).waitFor();
    await page.locator(".ai-after", { hasText: "Changed: page “contact-desk”" }).waitFor();
    await page.getByRole("button", { name: "Undo this turn" }).click();
    await page.locator(".ai-note", { hasText: /^Undone: \d+ change\(s\) reverted\.$/ }).waitFor();
    assert.equal((await api(server, "GET", `/api/v1/pages/${id}`)).status, 200, "the undo brought the page back");

    // Reopened from the history, the conversation shows every call, its
    // result, the approval with its answer and the undo, as they happened.
    const fresh = await reopen(page, `archive page ${id}`);
    await fresh.locator(".ai-user", { hasText: `archive page ${id}` }).waitFor();
    await fresh.locator(".ai-note", { hasText: /^Undone: \d+ change\(s\) reverted\.$/ }).waitFor();
    await settle(fresh);
    const shown = await logItems(fresh);
    assert.deepEqual(shown.map((i) => i.split(":")[0]), ["ai-user", "ai-tool-row", "ai-tool-row", "ai-approval", "ai-assistant", "ai-after", "ai-note"], shown.join("\n"));
    assert.deepEqual(shown.slice(1, 3), ["ai-tool-row: ⚙ searchTools", "ai-tool-row: ⚙ deletePage"]);
    const asked = fresh.getByRole("group", { name: "Archive the page Contact desk and its 1 section?" });
    assert.match(await asked.locator(".ai-approval-status").innerText(), /^Approved by .+ \(you\)\. Done: Archived 1 page\(s\), 2 record\(s\) in all/);
    assert.equal(await asked.getByRole("button").count(), 0, "an answered approval has no buttons");
    assert.equal(await fresh.locator(".ai-assistant", { hasText: "The page is archived." }).count(), 1, "said once");
    assert.equal(await fresh.getByRole("button", { name: "Undo this turn" }).count(), 0, "the turn was undone already");
    for (const row of await fresh.locator("#ai-log .ai-tool-row").all()) {
      assert.match(await row.locator("pre.ai-result").textContent(), /"success": true/, "each call with its result");
    }
    await fresh.locator(`#ai-log .ai-tool-row[data-name="deletePage"]`).locator("summary").click();
    await noViolations(fresh, "a reopened conversation with a result expanded");
    await page.context().close();
  });

  test("a conversation waiting for an approval is answered after moving to another screen, or reopened from the history", async () => {
    const { page, id } = await onPage("Spring sale");
    await say(page, `archive page ${id}`);
    const question = "Archive the page Spring sale?";
    await page.getByRole("group", { name: question }).waitFor();
    // Another screen: the approval waits there, answerable.
    await page.goto(`${server.base}/media`);
    const here = page.getByRole("group", { name: question });
    await here.getByRole("button", { name: "Approve" }).waitFor();
    await noViolations(page, "another screen with an approval waiting in the sidebar");
    // And in another tab, reopened from the history.
    const fresh = await reopen(page, `archive page ${id}`);
    const widget = fresh.getByRole("group", { name: question });
    await widget.waitFor();
    await widget.getByRole("button", { name: "Approve" }).click();
    await fresh.locator(".ai-assistant", { hasText: "The page is archived." }).waitFor();
    await widget.locator(".ai-approval-status", { hasText: /^Done: Archived 1 page\(s\)/ }).waitFor();
    assert.equal((await api(server, "GET", `/api/v1/pages/${id}`)).status, 404);
    // The first tab follows the same conversation: the turn went on there too.
    await page.locator(".ai-assistant", { hasText: "The page is archived." }).waitFor();
    await page.context().close();
  });

  test("rejecting with a reason leaves the record alone, tells the model why, and is shown again as it was", async () => {
    const { page, id } = await onPage("Press kit");
    await say(page, `archive page ${id}`);
    const widget = page.getByRole("group", { name: "Archive the page Press kit?" });
    await widget.waitFor();
    await widget.getByLabel("Reason (told to the agent if you reject)").fill("journalists still use it");
    await widget.getByRole("button", { name: "Reject" }).click();
    await page.locator(".ai-assistant", { hasText: "journalists still use it" }).waitFor();
    assert.equal((await api(server, "GET", `/api/v1/pages/${id}`)).status, 200);
    const told = model.requests.at(-1).messages.filter((m) => m.role === "tool").map((m) => m.content).join("\n");
    assert.match(told, /journalists still use it/);
    await page.reload();
    const again = page.getByRole("group", { name: "Archive the page Press kit?" });
    await again.waitFor();
    assert.match(await again.locator(".ai-approval-status").innerText(), /^Rejected by .+ \(you\): journalists still use it$/);
    assert.equal(await again.getByRole("button").count(), 0);
    // The refused call is marked, with what the model was told.
    assert.match(await page.locator(`#ai-log .ai-tool-row.ai-failed[data-name="deletePage"]`).locator(".ai-error").innerText(), /journalists still use it/);
    await page.context().close();
  });

  test("the banner names the record on screen as the agent leaves it: renamed, archived, brought back", async () => {
    const { page, id } = await onPage("Old name");
    const banner = page.locator("#ai-context");
    assert.equal(await banner.innerText(), "Working on: page “Old name”");
    await say(page, `rename page ${id} to New name`);
    await page.locator(".ai-assistant", { hasText: "I renamed the page to New name." }).waitFor();
    await page.locator("#main h1", { hasText: "New name" }).waitFor();
    assert.equal(await banner.innerText(), "Working on: page “New name”");
    // The next turn's context names it as it now is.
    await say(page, "what can you do?");
    await page.locator(".ai-assistant", { hasText: "I can add sections and archive pages." }).waitFor();
    const context = JSON.stringify(model.requests.at(-1));
    assert.match(context, /New name/);
    assert.doesNotMatch(context.replace(`rename page ${id} to New name`, ""), /Old name/);

    await say(page, `archive page ${id}`);
    await page.getByRole("group", { name: "Archive the page New name?" }).getByRole("button", { name: "Approve" }).click();
    await page.locator(".ai-assistant", { hasText: "The page is archived." }).waitFor();
    await page.locator("#ai-context", { hasText: "Working on: page “New name” (archived by the agent's turn)" }).waitFor();
    await page.getByRole("button", { name: "Undo this turn" }).last().click();
    await page.locator("#ai-context", { hasText: /^Working on: page “New name”$/ }).waitFor();
    await page.context().close();
  });

  test("a conversation whose events have left the server's memory is shown once, its final answer once", async () => {
    const { page } = await onPage("Long ago");
    await say(page, "answer through finalAnswer: Everything is in order.");
    await page.locator(".ai-assistant", { hasText: "Everything is in order." }).waitFor();
    await settle(page);
    const asShown = await logItems(page);
    assert.deepEqual(asShown, ["ai-user: answer through finalAnswer: Everything is in order.", "ai-assistant: Everything is in order."]);
    const session = await page.evaluate(() => sessionStorage.getItem("quire.ai.session"));
    // Enough other conversations end for the server to let this one's
    // events go from memory (it keeps those of the latest 256).
    for (let i = 0; i < 260; i++) {
      const r = await api(server, "POST", "/api/v1/agents/editor/chat", { message: "hello", wait: true });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    }
    const stored = await api(server, "GET", `/api/v1/sessions/${session}`);
    assert.notEqual(stored.body.lastEventId, "0", "the stream's last event is known from the stored events");
    await page.reload();
    await page.locator(".ai-assistant", { hasText: "Everything is in order." }).waitFor();
    await settle(page);
    assert.deepEqual(await logItems(page), asShown, "shown as it was, the final answer once");
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

  test("a person who asks to approve every change of pages sees the agent's updatePage wait in the sidebar, and it runs once approved", async () => {
    const { page, id } = await onPage("Careful copy");
    // My approvals, from the header: pages always ask.
    await page.getByRole("link", { name: "My approvals" }).click();
    await page.waitForURL(`${server.base}/me/approvals`);
    await page.getByRole("heading", { name: "My approvals", level: 1 }).waitFor();
    await noViolations(page, "My approvals");
    try {
      await page.getByLabel("Pages", { exact: true }).selectOption("always");
      await page.getByRole("button", { name: "Save my approvals" }).click();
      await page.waitForURL(`${server.base}/me/approvals?saved=1`);
      assert.equal(await page.getByLabel("Pages", { exact: true }).inputValue(), "always", "the choice is kept");
      await page.getByRole("status").filter({ hasText: "Saved." }).waitFor();

      await page.goto(`${server.base}/pages/${id}`);
      if (!(await page.locator("#ai").isVisible())) await page.getByRole("button", { name: "AI assistant" }).click();
      await say(page, `rename page ${id} to Carefully renamed`);
      const widget = page.getByRole("group", { name: "Change the page Careful copy?" });
      await widget.waitFor();
      await widget.getByText("The exact call: updatePage").click();
      assert.deepEqual(JSON.parse(await widget.locator("pre.ai-args").innerText()), { id, name: "Carefully renamed" });
      assert.equal((await api(server, "GET", `/api/v1/pages/${id}`)).body.name, "Careful copy", "nothing changed before the answer");
      await noViolations(page, "the sidebar with an updatePage waiting for approval");
      await widget.getByRole("button", { name: "Approve" }).click();
      await page.locator(".ai-assistant", { hasText: "I renamed the page to Carefully renamed." }).waitFor();
      await widget.locator(".ai-approval-status", { hasText: /^Done:/ }).waitFor();
      assert.equal((await api(server, "GET", `/api/v1/pages/${id}`)).body.name, "Carefully renamed");
    } finally {
      await page.goto(`${server.base}/me/approvals`);
      await page.getByLabel("Pages", { exact: true }).selectOption("");
      await page.getByRole("button", { name: "Save my approvals" }).click();
      await page.waitForURL(`${server.base}/me/approvals?saved=1`);
      await page.context().close();
    }
  });

  test("the agent reads the unsaved form on screen and proposes a value, kept or discarded there, saved only by the person", async () => {
    const { page, id } = await onPage("Spring draft");
    const name = page.getByLabel("Name", { exact: true });
    await name.fill("Spring opening hours (typed, not saved)");
    await say(page, "propose the name Spring opening hours");
    const proposal = page.locator(".ai-proposal").last();
    await proposal.getByRole("button", { name: "Keep" }).waitFor();
    // The model read the form as the person had it, as their own input.
    const system = model.requests.at(-2).messages.find((m) => m.role === "system").content;
    assert.match(system, /<untrusted source="person:form">[^]*Spring opening hours \(typed, not saved\)/);
    assert.ok(model.requests.at(-2).tools.some((t) => t.function.name === "proposeFormValues"), "active while a form is on screen");
    // The value is in its field, marked; the field the form lacks is named.
    assert.equal(await name.inputValue(), "Spring opening hours");
    assert.match(await name.getAttribute("class"), /ai-proposed/);
    assert.match(await proposal.innerText(), /Proposed in the form: Name\. Nothing is saved until you save\.[^]*Not on this form: no_such_field/);
    await new AxeBuilder({ page }).include("#ai").analyze().then((r) => {
      assert.deepEqual(r.violations.map((v) => v.id), [], "sidebar with a proposal");
    });
    if (SHOTS) await page.screenshot({ path: path.join(SHOTS, "sidebar-proposal.png") });
    // Nothing saved while it waits, autosave or not.
    await page.waitForTimeout(2600);
    assert.notEqual((await api(server, "GET", `/api/v1/pages/${id}`)).body.name, "Spring opening hours");
    // Discarded: the field is as the person had it.
    await proposal.getByRole("button", { name: "Discard" }).click();
    assert.equal(await name.inputValue(), "Spring opening hours (typed, not saved)");
    assert.doesNotMatch((await name.getAttribute("class")) ?? "", /ai-proposed/);
    await proposal.getByText("Discarded: the form is as you had it.").waitFor();

    // Proposed again and kept: the person's save writes it.
    await say(page, "propose the name Spring opening hours");
    const again = page.locator(".ai-proposal").last();
    await again.getByRole("button", { name: "Keep" }).click();
    await again.getByText("Kept in the form.").waitFor();
    assert.equal(await name.inputValue(), "Spring opening hours");
    await page.getByRole("button", { name: "Save page" }).click();
    await page.waitForURL(new RegExp(`/pages/${id}`));
    assert.equal((await api(server, "GET", `/api/v1/pages/${id}`)).body.name, "Spring opening hours");
    await page.context().close();
  });

  test("the record's AI actions start a turn with their task and the record as context", async () => {
    const { page, id } = await onPage("Our crew");
    await page.getByRole("button", { name: "Summarize" }).click();
    await page.locator(".ai-assistant", { hasText: "Summary of the page: a short one." }).waitFor();
    let asked = model.requests.at(-1);
    assert.match(JSON.stringify(asked.messages), new RegExp(id), "the record is the turn's context");
    // The site's other locales are offered, and the translation is written
    // into the same page, in German, as a draft; its own text stays.
    assert.deepEqual(await page.locator("#ai-language option").allTextContents(), ["German"]);
    await page.getByLabel("Language", { exact: true }).selectOption({ label: "German" });
    await page.getByRole("button", { name: "Translate", exact: true }).click();
    await page.locator(".ai-assistant", { hasText: "as its draft translation into de." }).waitFor();
    asked = model.requests.at(-1);
    const user = asked.messages.filter((m) => m.role === "user").at(-1).content;
    assert.match(user, /^Translate this page into German: .*locale "de"/);
    const translations = await api(server, "GET", `/api/v1/pages/${id}/translations`);
    const german = translations.body.translations.find((t) => t.translation.locale === "de");
    assert.equal(german?.translation.fields.name, "German: translated", JSON.stringify(translations.body));
    assert.equal(german.published, false);
    assert.equal((await api(server, "GET", `/api/v1/pages/${id}`)).body.name, "Our crew");
    assert.equal(await page.getByRole("button", { name: "Translate what is missing" }).count(), 1);
    // Over many records: a collection's entries, and the whole site from the dashboard.
    for (const [path, what] of [["/collections/blog", /^Translate every entry of the collection Blog/], ["/", /^Translate every page, post and entry of the site/]]) {
      await page.goto(`${server.base}${path}`);
      const before = model.requests.length;
      await page.getByRole("button", { name: "Translate what is missing" }).click();
      for (let i = 0; i < 50 && model.requests.length === before; i++) await new Promise((r) => setTimeout(r, 100));
      const said = model.requests.at(-1).messages.filter((m) => m.role === "user").at(-1).content;
      assert.match(said, what);
      await noViolations(page, `${path} with its agent actions`);
    }
    await page.context().close();
  });
});
