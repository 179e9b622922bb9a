// AG-UI 1.0 conformance: the official `@ag-ui/client` HttpAgent, unmodified,
// runs quire's editor agent (on a scripted model) through a text answer,
// tool calls, an approval interrupt resumed with approve, one resumed with
// reject, and a provider error. Every event on the wire is checked with
// `@ag-ui/core`'s schemas and the client's `verifyEvents`, and the client's
// own enforcement must find nothing to strip (it warns when it does).

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { HttpAgent, verifyEvents } from "@ag-ui/client";
import { EventSchemas, RunAgentInputSchema } from "@ag-ui/core/schemas";
import { from, lastValueFrom, toArray } from "rxjs";
import { startScriptedModel } from "./scripted-model.mjs";
import { api, startServer } from "./harness.mjs";

let model;
let server;

before(async () => {
  model = await startScriptedModel();
  server = await startServer({
    QUIRE_LLM_PROVIDER: "openai",
    QUIRE_LLM_BASE_URL: model.url,
    QUIRE_LLM_MODEL: "scripted",
    QUIRE_LLM_API_KEY: "not-a-real-key",
  });
});

after(async () => {
  await server?.stop();
  await model?.close();
});

/**
 * An HttpAgent for the editor agent with the admin token, set up as
 * docs/agent.md says: nothing to set up, the thread id the client made
 * becomes the session's.
 */
function editor(fetchImpl) {
  return new HttpAgent({
    url: `${server.base}/api/v1/agents/editor/agui`,
    headers: { Authorization: `Bearer ${server.token}` },
    fetch: fetchImpl,
  });
}

/** The events of a text/event-stream body, from their `data:` lines. */
function sseEvents(text) {
  return text
    .split(/\r?\n\r?\n/)
    .map((block) => block.split(/\r?\n/).filter((l) => l.startsWith("data:")).map((l) => l.slice(5).replace(/^ /, "")).join("\n"))
    .filter((data) => data.length > 0)
    .map((data) => JSON.parse(data));
}

/**
 * Runs `agent` once (`params` as runAgent takes them) and answers what
 * went over the wire (the request's body and every event), what the
 * client made of it (its result, or the error it threw) and the warnings
 * it printed. The wire is read from a copy of the response's body.
 */
async function runOnce(params = {}) {
  const wire = { bodies: [], texts: [] };
  const fetchImpl = async (url, init) => {
    wire.bodies.push(JSON.parse(init.body));
    const res = await fetch(url, init);
    if (!res.body) return res;
    const [mine, theirs] = res.body.tee();
    wire.texts.push(new Response(mine).text());
    return new Response(theirs, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
  const agent = params.agent ?? editor(fetchImpl);
  agent.fetch = fetchImpl;
  const warnings = [];
  const warn = console.warn;
  console.warn = (...args) => warnings.push(args.map(String).join(" "));
  let result;
  let error;
  try {
    result = await agent.runAgent(params.run ?? {});
  } catch (e) {
    error = e;
  } finally {
    console.warn = warn;
  }
  const events = (await Promise.all(wire.texts)).flatMap(sseEvents);
  return { agent, request: wire.bodies[0], events, result, error, warnings };
}

/** Every event is one of AG-UI's, the sequence passes verifyEvents, and the client stripped nothing. */
async function conforms(run) {
  assert.ok(run.events.length > 0, "the run answered events");
  RunAgentInputSchema.parse(run.request);
  for (const event of run.events) {
    const parsed = EventSchemas.safeParse(event);
    assert.ok(parsed.success, `${event.type} is not an AG-UI event: ${parsed.error?.message}\n${JSON.stringify(event)}`);
    for (const [key, value] of Object.entries(event)) {
      assert.notEqual(value, null, `${event.type}.${key} is null rather than absent`);
    }
  }
  const verified = await lastValueFrom(from(run.events).pipe(verifyEvents(), toArray()));
  assert.equal(verified.length, run.events.length);
  assert.deepEqual(run.warnings, [], "the client's enforcement found nothing to strip or drop");
  const first = run.events[0];
  assert.equal(first.type, "RUN_STARTED");
  assert.equal(first.runId, run.request.runId, "the run takes the client's runId");
  return run.events.at(-1);
}

/** Runs a message on `agent` (a new one when absent): adds it, then runs. */
async function say(text, agent) {
  agent ??= editor();
  agent.addMessage({ id: crypto.randomUUID(), role: "user", content: text });
  const run = await runOnce({ agent });
  if (run.events[0]?.type === "RUN_STARTED") assert.equal(agent.threadId, run.events[0].threadId, "the thread is the session");
  return run;
}

test("a text answer", async () => {
  const agent = editor();
  const thread = agent.threadId;
  assert.ok(thread, "the client made its own thread id");
  const run = await say("hello", agent);
  assert.equal(run.error, undefined, String(run.error));
  const last = await conforms(run);
  assert.equal(last.type, "RUN_FINISHED");
  assert.deepEqual(last.outcome, { type: "success" });
  const text = run.events.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").map((e) => e.delta).join("");
  assert.equal(text, "Hello from the scripted model.");
  const said = run.agent.messages.at(-1);
  assert.equal(said.role, "assistant");
  assert.equal(said.content, "Hello from the scripted model.");

  assert.equal(run.events[0].threadId, thread, "the new session takes the client's thread id");

  // The same thread goes on: the session's next turn, the client never
  // having adopted anything of the server's.
  const again = await say("hello again", run.agent);
  await conforms(again);
  assert.equal(run.agent.threadId, thread);
  assert.equal(again.request.threadId, thread);
  assert.equal(again.events[0].threadId, thread);
  const session = await api(server, "GET", `/api/v1/sessions/${thread}`);
  assert.equal(session.status, 200);
  assert.equal(session.body.session.turns, 2);
});

test("tool calls", async () => {
  const run = await say("list the pages");
  assert.equal(run.error, undefined, String(run.error));
  const last = await conforms(run);
  assert.deepEqual(last.outcome, { type: "success" });
  const starts = run.events.filter((e) => e.type === "TOOL_CALL_START");
  assert.deepEqual(starts.map((e) => e.toolCallName), ["searchTools", "getPage"]);
  for (const start of starts) assert.ok(!("parentMessageId" in start), "no parent message: absent, not null");
  const results = run.events.filter((e) => e.type === "TOOL_CALL_RESULT");
  assert.deepEqual(results.map((e) => e.toolCallId), starts.map((e) => e.toolCallId));
  assert.ok(JSON.parse(results[1].content).success !== false, results[1].content);
  const calls = run.agent.messages.flatMap((m) => m.toolCalls ?? []).map((c) => c.function.name);
  assert.deepEqual(calls, ["searchTools", "getPage"]);
});

/** A page of the demo site to archive. */
async function somePage(index) {
  const pages = await api(server, "GET", "/api/v1/pages?limit=50");
  assert.equal(pages.status, 200, JSON.stringify(pages.body));
  const page = pages.body.items.filter((p) => !p.isProtected)[index];
  assert.ok(page, "the demo site has pages");
  return page;
}

/** Asks to archive `page` and checks the run ends with one interrupt for it. */
async function interruptFor(page) {
  const run = await say(`archive page ${page.id}`);
  assert.equal(run.error, undefined, String(run.error));
  const last = await conforms(run);
  assert.equal(last.type, "RUN_FINISHED");
  assert.equal(last.outcome.type, "interrupt");
  assert.equal(last.outcome.interrupts.length, 1);
  const [interrupt] = last.outcome.interrupts;
  if (process.env.AGUI_SHOW) console.log(JSON.stringify(last, null, 2));
  const call = run.events.find((e) => e.type === "TOOL_CALL_START" && e.toolCallName === "deletePage");
  assert.equal(interrupt.reason, "tool_call");
  assert.equal(interrupt.toolCallId, call.toolCallId);
  assert.match(interrupt.message, /deletePage/);
  assert.ok(!Number.isNaN(Date.parse(interrupt.expiresAt)) && Date.parse(interrupt.expiresAt) > Date.now());
  assert.equal(interrupt.metadata.tool, "deletePage");
  assert.equal(interrupt.metadata.approvalId, interrupt.id);
  assert.deepEqual(interrupt.metadata.arguments.ids, [page.id]);
  assert.ok(JSON.stringify(interrupt.metadata.items).includes(page.id), JSON.stringify(interrupt.metadata.items));
  assert.deepEqual(interrupt.responseSchema.required, ["approved"]);
  assert.deepEqual(run.agent.pendingInterrupts.map((i) => i.id), [interrupt.id], "the client holds the interrupt");
  // The approval waits where every surface sees it.
  const waiting = await api(server, "GET", "/api/v1/approvals");
  assert.ok(waiting.body.items.some((c) => c.id === interrupt.id), JSON.stringify(waiting.body));
  return { agent: run.agent, interrupt, call };
}

test("an approval interrupt resumed with approve", async () => {
  const page = await somePage(0);
  const { agent, interrupt, call } = await interruptFor(page);
  const resumed = await runOnce({
    agent,
    run: { resume: [{ interruptId: interrupt.id, status: "resolved", payload: { approved: true } }] },
  });
  assert.equal(resumed.error, undefined, String(resumed.error));
  assert.deepEqual(resumed.request.resume, [{ interruptId: interrupt.id, status: "resolved", payload: { approved: true } }]);
  const last = await conforms(resumed);
  assert.equal(resumed.events[0].threadId, agent.threadId, "the same thread goes on");
  assert.deepEqual(last.outcome, { type: "success" });
  const result = resumed.events.find((e) => e.type === "TOOL_CALL_RESULT");
  assert.equal(result.toolCallId, call.toolCallId, "the result answers the interrupted call");
  assert.notEqual(JSON.parse(result.content).success, false, result.content);
  assert.ok(!resumed.events.some((e) => e.type === "TOOL_CALL_START"), "the call is not proposed again");
  assert.equal(last.result.text, "The page is archived.");
  assert.equal((await api(server, "GET", `/api/v1/pages/${page.id}`)).status, 404, "the page is archived");
  assert.deepEqual(agent.pendingInterrupts, []);
});

test("an approval interrupt resumed with reject and a reason", async () => {
  const page = await somePage(0);
  const { agent, interrupt, call } = await interruptFor(page);
  const resumed = await runOnce({
    agent,
    run: { resume: [{ interruptId: interrupt.id, status: "resolved", payload: { approved: false, reason: "keep it for the launch" } }] },
  });
  assert.equal(resumed.error, undefined, String(resumed.error));
  const last = await conforms(resumed);
  assert.deepEqual(last.outcome, { type: "success" });
  const result = resumed.events.find((e) => e.type === "TOOL_CALL_RESULT");
  assert.equal(result.toolCallId, call.toolCallId);
  assert.equal(JSON.parse(result.content).errorCode, "REJECTED");
  assert.equal(last.result.text, "Understood, I left it alone. You said: keep it for the launch");
  assert.equal((await api(server, "GET", `/api/v1/pages/${page.id}`)).status, 200, "the page stays");
});

test("a provider error", async () => {
  const run = await say("fail");
  const last = await conforms(run);
  assert.equal(last.type, "RUN_ERROR");
  assert.equal(last.code, "MODEL_ERROR");
  assert.match(last.message, /400/);
  assert.ok(!run.events.some((e) => e.type === "RUN_FINISHED"));
});

test("refusals come before the stream, in the API's one error shape", async () => {
  const post = (body, token = server.token) =>
    fetch(`${server.base}/api/v1/agents/editor/agui`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: await r.json() }));
  const input = { threadId: crypto.randomUUID(), runId: crypto.randomUUID(), messages: [] };
  const none = await post(input);
  assert.equal(none.status, 422);
  assert.equal(none.body.field, "messages");
  const resume = await post({ ...input, resume: [{ interruptId: "nope", status: "resolved", payload: { approved: true } }] });
  assert.equal(resume.status, 422);
  assert.equal(resume.body.field, "resume");
  const unruly = await post({ ...input, threadId: "not a thread id" });
  assert.equal(unruly.status, 422);
  assert.equal(unruly.body.field, "threadId");
  const anonymous = await post(input, "not-a-token");
  assert.equal(anonymous.status, 401);
});
