// Arranging in a real browser: a page's sections dragged and moved by the
// keys on their grip (picked up, moved, put down; put back with Escape;
// Alt+arrow at once), a menu's items and sibling pages the same, a list
// field's items in a form reordered and saved; after each, the order the
// server keeps, read over REST, and one request per move. The new-section
// chooser's sketches. axe-core on every screen and state, an item picked up
// included. Without the script the ↑/↓ buttons still move.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { api, chooseAdminPassword, launch, noViolations, signedIn, startServer } from "./harness.mjs";

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

async function pageBySlug(slug) {
  return (await api(server, "GET", "/api/v1/pages?limit=100")).body.items.find((p) => p.slug === slug);
}

/** The template keys of a page's sections, in the order the server keeps. */
async function sectionOrder(pageId) {
  return (await api(server, "GET", `/api/v1/pages/${pageId}/sections`)).body.items.map((s) => s.templateKey);
}

/** The names of the top-level pages, in order. */
async function rootPages() {
  const items = (await api(server, "GET", "/api/v1/pages?limit=100")).body.items;
  return items.filter((p) => !p.parentId).map((p) => p.name);
}

/** The header menu's items under `parent` (none: the top level), in order. */
async function menuItems(parent) {
  const items = (await api(server, "GET", "/api/v1/navigations/header/items?limit=100")).body.items;
  return items.filter((i) => (i.parentId ?? null) === (parent ?? null));
}

/** Counts the move requests `page` sends while `act` runs. */
async function moves(page, act) {
  let sent = 0;
  const count = (req) => { if (req.method() === "POST" && /\/move$/.test(req.url())) sent += 1; };
  page.on("request", count);
  await act();
  page.off("request", count);
  return sent;
}

const live = (page) => page.locator("#sort-live");

describe("arranging", () => {
  test("a page's sections are dragged and moved with the keys, one request per move", async () => {
    const page = await signedIn(browser, server, ADMIN, PASSWORD);
    const home = await pageBySlug("home");
    await page.goto(`${server.base}/pages/${home.id}`);
    assert.deepEqual(await sectionOrder(home.id), ["hero", "feature-grid", "testimonials", "cta"]);
    await noViolations(page, "page editor with grips");
    const rows = page.locator("ol.sections > li");

    // Dragged by its grip onto the top half of the first section.
    const sent = await moves(page, async () => {
      await page.getByRole("button", { name: "Move Call to action", exact: true })
        .dragTo(rows.nth(0), { targetPosition: { x: 20, y: 4 } });
      await assert.doesNotReject(live(page).filter({ hasText: "Moved Call to action to position 1 of 4." }).waitFor());
    });
    assert.equal(sent, 1, "one request for the move");
    assert.deepEqual(await sectionOrder(home.id), ["cta", "hero", "feature-grid", "testimonials"]);
    assert.equal(await page.getByRole("button", { name: "Move Call to action up" }).isDisabled(), true, "first now");
    await noViolations(page, "page editor after a drag");

    // Picked up with Space, moved down twice, put down with Space.
    const hero = page.getByRole("button", { name: "Move Hero", exact: true });
    await hero.focus();
    await page.keyboard.press("Space");
    await live(page).filter({ hasText: "Picked up Hero at position 2 of 4." }).waitFor();
    assert.equal(await hero.getAttribute("aria-pressed"), "true");
    await noViolations(page, "page editor with a section picked up");
    await page.keyboard.press("ArrowDown");
    await live(page).filter({ hasText: "Hero, position 3 of 4" }).waitFor();
    await page.keyboard.press("ArrowDown");
    assert.deepEqual(await sectionOrder(home.id), ["cta", "hero", "feature-grid", "testimonials"], "not sent while held");
    const keyed = await moves(page, async () => {
      await page.keyboard.press("Space");
      await live(page).filter({ hasText: "Moved Hero to position 4 of 4." }).waitFor();
    });
    assert.equal(keyed, 1);
    assert.deepEqual(await sectionOrder(home.id), ["cta", "feature-grid", "testimonials", "hero"]);
    assert.equal(await hero.evaluate((el) => el === document.activeElement), true, "the focus stays on the grip");

    // Escape puts it back and sends nothing.
    const none = await moves(page, async () => {
      await page.keyboard.press("Enter");
      await page.keyboard.press("ArrowUp");
      await page.keyboard.press("ArrowUp");
      await page.keyboard.press("Escape");
      await live(page).filter({ hasText: "Move cancelled; Hero is back at position 4 of 4." }).waitFor();
    });
    assert.equal(none, 0);
    assert.equal(await rows.nth(3).getAttribute("data-name"), "Hero");

    // Alt+Up moves it at once.
    await page.keyboard.press("Alt+ArrowUp");
    await live(page).filter({ hasText: "Moved Hero to position 3 of 4." }).waitFor();
    assert.deepEqual(await sectionOrder(home.id), ["cta", "feature-grid", "hero", "testimonials"]);

    // The screen drawn again shows the order kept.
    await page.reload();
    const names = await rows.evaluateAll((els) => els.map((el) => el.dataset.name));
    assert.deepEqual(names, ["Call to action", "Feature grid", "Hero", "Testimonials"]);
    await page.context().close();
  });

  test("the new-section chooser sketches each template", async () => {
    const page = await signedIn(browser, server, ADMIN, PASSWORD);
    const about = await pageBySlug("about");
    await page.goto(`${server.base}/pages/${about.id}`);
    await page.getByText("What each template is for").click();
    const templates = (await api(server, "GET", "/api/v1/section-templates?limit=100")).body.items;
    assert.equal(await page.locator("details.templates dd .sketch").count(), templates.length);
    const hero = page.locator('dd[data-template="hero"] .sketch > span');
    assert.deepEqual(await hero.evaluateAll((els) => els.map((el) => el.className)), ["sk-h", "sk-line", "sk-img", "sk-btn"]);
    await page.getByLabel("Add a section").selectOption("image-text");
    assert.equal(await page.locator("#template-about .sketch .sk-img").count(), 1, "the chosen one's sketch beside");
    await page.getByText("An image beside a block of text.").first().waitFor();
    await noViolations(page, "new-section chooser with sketches");
    await page.context().close();
  });

  test("a menu's items and sibling pages are moved by dragging and by the keys", async () => {
    const page = await signedIn(browser, server, ADMIN, PASSWORD);
    const header = (await api(server, "GET", "/api/v1/navigations/header")).body;
    await page.goto(`${server.base}/navigation/${header.id}`);
    await noViolations(page, "menu with grips");
    const labels = (items) => items.map((i) => i.label);
    assert.deepEqual(labels(await menuItems()), ["Home", "About", "Pricing", "Blog", "Contact"]);
    const about = (await menuItems()).find((i) => i.label === "About");

    // About, with Team under it, dragged onto the lower half of Blog.
    const blog = page.locator("ul.menu-items > li", { hasText: "Blog" });
    const sent = await moves(page, async () => {
      await page.getByRole("button", { name: "Move About", exact: true })
        .dragTo(blog, { targetPosition: { x: 20, y: (await blog.boundingBox()).height - 3 } });
      await live(page).filter({ hasText: "Moved About to position 4 of 5." }).waitFor();
    });
    assert.equal(sent, 1);
    assert.deepEqual(labels(await menuItems()), ["Home", "Pricing", "Blog", "About", "Contact"]);
    assert.deepEqual(labels(await menuItems(about.id)), ["Team"], "its sub-item stays under it");
    const shown = await page.locator("ul.menu-items > li").evaluateAll((els) => els.map((el) => el.dataset.name));
    assert.deepEqual(shown, ["Home", "Pricing", "Blog", "About", "Team", "Contact"], "its sub-item moved along");
    await noViolations(page, "menu after a drag");

    // Sibling pages: Contact picked up with Enter and put down second.
    await page.goto(`${server.base}/pages`);
    await noViolations(page, "page list with grips");
    const before = await rootPages();
    assert.equal(before.at(-1), "Contact");
    await page.getByRole("button", { name: "Move Contact", exact: true }).focus();
    await page.keyboard.press("Enter");
    await noViolations(page, "page list with a page picked up");
    for (let i = 0; i < before.length - 2; i += 1) await page.keyboard.press("ArrowUp");
    const keyed = await moves(page, async () => {
      await page.keyboard.press("Enter");
      await live(page).filter({ hasText: `Moved Contact to position 2 of ${before.length}.` }).waitFor();
    });
    assert.equal(keyed, 1);
    assert.deepEqual(await rootPages(), [before[0], "Contact", ...before.slice(1, -1)]);
    await page.context().close();

    // Without the script the ↑/↓ buttons still move, a reload each.
    const plain = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1280, height: 800 } });
    const bare = await plain.newPage();
    await bare.goto(`${server.base}/sign-in`);
    await bare.getByLabel("Email").fill(ADMIN);
    await bare.getByLabel("Password").fill(PASSWORD);
    await bare.getByRole("button", { name: "Sign in" }).click();
    await bare.waitForURL(`${server.base}/`);
    await bare.goto(`${server.base}/pages`);
    assert.equal(await bare.locator(".grip").count(), 0, "no grip without the script");
    await bare.getByRole("button", { name: "Move Contact down" }).click();
    await bare.waitForLoadState();
    assert.deepEqual(await rootPages(), [before[0], before[1], "Contact", ...before.slice(2, -1)]);
    await plain.close();
  });

  test("a list field's items are reordered in the form and saved", async () => {
    const page = await signedIn(browser, server, ADMIN, PASSWORD);
    const pricing = await pageBySlug("pricing");
    const faq = (await api(server, "GET", `/api/v1/pages/${pricing.id}/sections`)).body.items.find((s) => s.templateKey === "faq");
    const questions = faq.content.items.map((i) => i.question);
    assert.equal(questions.length, 2);
    // Tall enough that the drag needs no scrolling (Playwright's drag does not scroll while the button is down).
    await page.setViewportSize({ width: 1280, height: 2400 });
    await page.goto(`${server.base}/sections/${faq.id}`);
    await noViolations(page, "section form with grips");
    const items = page.locator("ol.items > li.item");
    // The blank item at the end, filled in, is added when the form is saved.
    await items.nth(2).getByLabel("Question").fill("Is there a third?");
    await items.nth(2).getByLabel("Answer").fill("There is now.");

    // The new third item dragged to the top, then the first of the old ones moved down with Alt+Down.
    const sent = await moves(page, async () => {
      await items.nth(2).locator(".grip").dragTo(items.nth(0), { targetPosition: { x: 20, y: 4 } });
      await live(page).filter({ hasText: "to position 1 of 3." }).waitFor();
    });
    assert.equal(sent, 0, "a form's list sends nothing");
    await items.nth(1).locator(".grip").focus();
    await page.keyboard.press("Space");
    await noViolations(page, "section form with an item picked up");
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("Space");
    await live(page).filter({ hasText: "to position 3 of 3." }).waitFor();
    assert.equal(await items.nth(0).getByLabel("Question").inputValue(), "Is there a third?");
    assert.equal(await items.nth(2).getByLabel("Question").inputValue(), questions[0]);
    assert.equal(await items.nth(2).locator("legend").first().textContent(), "Item 3", "renumbered");
    assert.deepEqual(
      (await api(server, "GET", `/api/v1/sections/${faq.id}`)).body.content.items.map((i) => i.question),
      questions,
      "nothing stored before saving",
    );
    await page.getByRole("button", { name: "Save section" }).click();
    await page.getByText("Saved.").waitFor();
    const saved = (await api(server, "GET", `/api/v1/sections/${faq.id}`)).body.content.items.map((i) => i.question);
    assert.deepEqual(saved, ["Is there a third?", questions[1], questions[0]]);
    await noViolations(page, "section form after saving");
    await page.context().close();
  });
});
