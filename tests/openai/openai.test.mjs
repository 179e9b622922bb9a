// Quire's agents as OpenAI-compatible models, through the official `openai`
// Node client, unmodified, set up as docs/agent.md says (base URL
// `<server>/v1`, an API token as the key): the models listed, a completion
// whole and streamed (raw chunks and the client's own stream helper), a
// conversation that continues its session, a turn that pauses for
// approval and goes on once approved, and refusals as the client's typed
// errors. The server is `quire serve` on the AG-UI suite's scripted model.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { startScriptedModel } from "../agui/scripted-model.mjs";
import { api, startServer } from "../agui/harness.mjs";

let model;
let server;
let client;

before(async () => {
  model = await startScriptedModel();
  server = await startServer({
    QUIRE_LLM_PROVIDER: "openai",
    QUIRE_LLM_BASE_URL: model.url,
    QUIRE_LLM_MODEL: "scripted",
    QUIRE_LLM_API_KEY: "not-a-real-key",
  });
  // No retries: a refusal is answered once, and a retried turn would be a second turn.
  client = new OpenAI({ baseURL: `${server.base}/v1`, apiKey: server.token, maxRetries: 0 });
});

after(async () => {
  await server?.stop();
  await model?.close();
});

/** The session an answer names on its last line. */
function sessionOf(content) {
  const match = content.match(/\n\[quire-session\]: (\S+)$/);
  assert.ok(match, `no session line: ${content}`);
  return match[1];
}

test("models are the agents the token may use", async () => {
  const ids = [];
  for await (const m of client.models.list()) {
    assert.equal(m.object, "model");
    assert.equal(m.owned_by, "quire");
    assert.equal(typeof m.created, "number");
    ids.push(m.id);
  }
  assert.ok(ids.includes("editor"), ids.join(", "));
  const editor = await client.models.retrieve("editor");
  assert.equal(editor.id, "editor");
  await assert.rejects(client.models.retrieve("nobody"), (e) => e instanceof OpenAI.NotFoundError && e.code === "model_not_found");
});

test("a completion is a turn, and the conversation sent back continues its session", async () => {
  const first = await client.chat.completions.create({ model: "editor", messages: [{ role: "user", content: "hello" }] });
  assert.equal(first.object, "chat.completion");
  assert.equal(first.model, "editor");
  assert.equal(first.choices[0].finish_reason, "stop");
  const content = first.choices[0].message.content;
  assert.ok(content.startsWith("Hello from the scripted model."), content);
  assert.equal(typeof first.usage.total_tokens, "number");
  const session = sessionOf(content);

  const messages = [
    { role: "user", content: "hello" },
    { role: "assistant", content },
    { role: "user", content: "list the pages" },
  ];
  const next = await client.chat.completions.create({ model: "editor", messages });
  const text = next.choices[0].message.content;
  assert.ok(text.startsWith("Here are the site's pages."), text);
  assert.equal(sessionOf(text), session);
  // The tools ran on the server, in the same session's second turn.
  const stored = await api(server, "GET", `/api/v1/sessions/${session}`);
  assert.equal(stored.body.session.turns, 2);
  const tools = stored.body.messages.flatMap((m) => (m.body.toolCalls ?? []).map((c) => c.name));
  assert.ok(tools.includes("getPage"), tools.join(", "));
});

test("a streamed completion: chunks, usage, [DONE], and the client's stream helper", async () => {
  const stream = await client.chat.completions.create({
    model: "editor",
    messages: [{ role: "user", content: "hello" }],
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = "";
  let finish = null;
  let usage = null;
  const ids = new Set();
  for await (const chunk of stream) {
    assert.equal(chunk.object, "chat.completion.chunk");
    ids.add(chunk.id);
    if (chunk.usage) usage = chunk.usage;
    for (const choice of chunk.choices) {
      text += choice.delta.content ?? "";
      finish = choice.finish_reason ?? finish;
    }
  }
  assert.equal(ids.size, 1);
  assert.ok(text.startsWith("Hello from the scripted model."), text);
  sessionOf(text);
  assert.equal(finish, "stop");
  assert.equal(typeof usage?.completion_tokens, "number");

  const helper = client.chat.completions.stream({ model: "editor", messages: [{ role: "user", content: "hello" }] });
  const pieces = [];
  helper.on("content", (delta) => pieces.push(delta));
  const whole = await helper.finalChatCompletion();
  assert.equal(whole.choices[0].message.content, pieces.join(""));
  assert.ok(whole.choices[0].message.content.startsWith("Hello from the scripted model."));
});

test("a paused turn says what waits and where; approved, it goes on and the next message continues", async () => {
  const pages = await api(server, "GET", "/api/v1/pages?limit=100");
  const contact = pages.body.items.find((p) => p.slug === "contact");
  const said = `archive page ${contact.id}`;
  const paused = await client.chat.completions.create({ model: "editor", messages: [{ role: "user", content: said }] });
  const content = paused.choices[0].message.content;
  assert.ok(content.startsWith("This turn waits for a person's approval"), content);
  assert.match(content, /- deletePage: /);
  assert.ok(content.includes(`${server.base}/approvals`), content);
  const approval = content.match(/approval `([^`]+)`/)[1];
  assert.ok(content.includes(`POST ${server.base}/api/v1/approvals/${approval}/approve`), content);
  const session = sessionOf(content);

  // Streamed, a message while it waits says the same.
  const conversation = [{ role: "user", content: said }, { role: "assistant", content }];
  const waiting = client.chat.completions.stream({ model: "editor", messages: [...conversation, { role: "user", content: "well?" }] });
  const again = (await waiting.finalChatCompletion()).choices[0].message.content;
  assert.ok(again.includes(`approval \`${approval}\``), again);

  const approved = await api(server, "POST", `/api/v1/approvals/${approval}/approve`);
  assert.equal(approved.status, 200, JSON.stringify(approved.body));
  for (let i = 0; i < 100; i++) {
    const s = await api(server, "GET", `/api/v1/sessions/${session}`);
    if (s.body.session.status === "idle") break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const gone = await api(server, "GET", `/api/v1/pages/${contact.id}`);
  assert.equal(gone.status, 404, "the page is archived");
  const next = await client.chat.completions.create({
    model: "editor",
    messages: [...conversation, { role: "user", content: "thanks" }],
  });
  assert.equal(sessionOf(next.choices[0].message.content), session);
});

test("refusals are the client's typed errors", async () => {
  const stranger = new OpenAI({ baseURL: `${server.base}/v1`, apiKey: "qk_not-a-token", maxRetries: 0 });
  await assert.rejects(stranger.models.list(), (e) => e instanceof OpenAI.AuthenticationError && e.code === "invalid_api_key");
  await assert.rejects(
    client.chat.completions.create({ model: "nobody", messages: [{ role: "user", content: "hi" }] }),
    (e) => e instanceof OpenAI.NotFoundError && e.param === "model" && /nobody/.test(e.message),
  );
  await assert.rejects(
    client.chat.completions.create({ model: "editor", messages: [{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }] }),
    (e) => e instanceof OpenAI.UnprocessableEntityError && e.param === "messages.1.role" && /person's/.test(e.message),
  );
  await assert.rejects(
    client.chat.completions.create({ model: "editor", messages: [{ role: "user", content: "fail" }] }),
    (e) => e instanceof OpenAI.InternalServerError && e.status === 502 && e.code === "model_error",
  );
  const failing = await client.chat.completions.create({ model: "editor", messages: [{ role: "user", content: "fail" }], stream: true });
  await assert.rejects(
    (async () => { for await (const _ of failing) { /* read to the end */ } })(),
    (e) => e instanceof OpenAI.APIError && /refuses this request/.test(e.message),
  );
});
