// A scripted OpenAI-compatible model for the sidebar's tests: it reads the
// user's last message and acts on it through tool calls, as a model would.
//
//   "add a text section to <pageId>"  → searchTools, then createSection
//   "archive page <pageId>"           → searchTools, then deletePage
//   "rename page <pageId> to <name>"  → searchTools, then updatePage
//   "add a section to the missing page" → searchTools, then createSection
//                                        on a page that is not there (fails)
//   "answer through finalAnswer: <text>" → finalAnswer with the text
//   "propose the name <text>"          → proposeFormValues for the form on
//                                        screen: its name field (and one
//                                        the form does not have)
//   "Translate this page into <Language>: … locale "<tag>" …" → searchTools,
//                                        then updatePage of the page on
//                                        screen (the turn's context) in
//                                        that locale
//
// After the tool's result it answers in words, quoting a rejection's
// reason, so a test can see that the model was told. Every request is kept
// in `requests`.

import http from "node:http";

export async function startFakeModel() {
  const requests = [];
  let n = 0;
  const server = http.createServer((req, res) => {
    let raw = "";
    req.on("data", (c) => { raw += c; });
    req.on("end", () => {
      const body = JSON.parse(raw || "{}");
      requests.push(body);
      const message = answer(body);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({
        id: `fake-${++n}`,
        object: "chat.completion",
        model: body.model,
        choices: [{ index: 0, message, finish_reason: message.tool_calls ? "tool_calls" : "stop" }],
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      }));
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address();
  return { url: `http://127.0.0.1:${port}/v1`, requests, close: () => new Promise((r) => server.close(r)) };

  function answer(body) {
    const messages = body.messages ?? [];
    const lastUser = messages.map((m) => m.role).lastIndexOf("user");
    const said = String(messages[lastUser]?.content ?? "");
    const after = messages.slice(lastUser + 1);
    const names = {};
    for (const m of after) for (const c of m.tool_calls ?? []) names[c.id] = c.function.name;
    const results = after.filter((m) => m.role === "tool").map((m) => ({ name: names[m.tool_call_id], content: String(m.content) }));
    const active = (body.tools ?? []).map((t) => t.function.name);
    const step = (tool, args) => {
      if (results.some((r) => r.name === tool)) return null;
      if (!active.includes(tool)) {
        if (results.some((r) => r.name === "searchTools")) return text(`${tool} is not available to me.`);
        return toolCall("searchTools", { query: tool });
      }
      return toolCall(tool, args);
    };
    let m;
    if ((m = said.match(/add a text section to (\S+)/))) {
      return step("createSection", {
        pageId: m[1],
        templateKey: "text",
        content: { heading: "From the agent", body: "Written by the agent." },
        status: "published",
      }) ?? text("I added a text section.");
    }
    if ((m = said.match(/archive page (\S+)/))) {
      const done = step("deletePage", { ids: [m[1]] });
      if (done) return done;
      const result = results.find((r) => r.name === "deletePage").content;
      const reason = result.match(/rejected this call: ([^"\\&]+)/);
      if (/REJECTED/.test(result)) return text(`Understood, I left it alone. You said: ${reason ? reason[1] : "no reason"}`);
      return text("The page is archived.");
    }
    if ((m = said.match(/rename page (\S+) to (.+)$/))) {
      return step("updatePage", { id: m[1], name: m[2] }) ?? text(`I renamed the page to ${m[2]}.`);
    }
    if ((m = said.match(/^Summarize this (\w+)/))) return text(`Summary of the ${m[1]}: a short one.`);
    if ((m = said.match(/^Translate this (\w+) into (\w+): .*locale "([\w-]+)"/))) {
      // The record on screen, from the turn's context.
      const context = messages.find((x) => x.role === "system" && String(x.content).includes("<ui-context>"));
      const id = String(context?.content ?? "").match(/"id":"([^"]+)"/)?.[1];
      if (m[1] === "page" && id) {
        const done = step("updatePage", { id, locale: m[3], name: `${m[2]}: translated` });
        if (done) return done;
      }
      return text(`I wrote the ${m[1]} in ${m[2]} as its draft translation into ${m[3]}.`);
    }
    if (said === "add a section to the missing page") {
      const done = step("createSection", { pageId: "no-such-page", templateKey: "text", content: { heading: "Lost" } });
      if (done) return done;
      const failed = results.find((r) => r.name === "createSection").content.match(/"error":"([^"\\]+)"/);
      return text(`I could not add it: ${failed ? failed[1] : "it failed"}`);
    }
    if ((m = said.match(/^answer through finalAnswer: (.+)$/))) return toolCall("finalAnswer", { message: m[1] });
    if ((m = said.match(/^propose the name (.+)$/))) {
      return step("proposeFormValues", { values: { name: m[1], no_such_field: "x" }, reason: "A name that says what the page is." })
        ?? text("I proposed a name in the form.");
    }
    return text("I can add sections and archive pages.");
  }

  function text(content) {
    return { role: "assistant", content };
  }

  function toolCall(name, args) {
    return {
      role: "assistant",
      content: null,
      tool_calls: [{ id: `call_${++n}`, type: "function", function: { name, arguments: JSON.stringify(args) } }],
    };
  }
}
