// A scripted OpenAI-compatible model for the AG-UI suite: it reads the
// person's last message and answers as a model would, through tool calls
// where one is asked for.
//
//   "hello"              → a text answer
//   "list the pages"     → searchTools, then getPage, then a text answer
//   "archive page <id>"  → deletePage (which waits for a person), then a
//                          text saying what became of it, quoting a
//                          rejection's reason
//   "fail"               → the provider answers HTTP 400
//
// Every request is kept in `requests`.

import http from "node:http";

export async function startScriptedModel() {
  const requests = [];
  let n = 0;
  const server = http.createServer((req, res) => {
    let raw = "";
    req.on("data", (c) => { raw += c; });
    req.on("end", () => {
      const body = JSON.parse(raw || "{}");
      requests.push(body);
      const message = answer(body);
      if (message === "fail") {
        res.writeHead(400, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: "the scripted model refuses this request", type: "invalid_request_error" } }));
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({
        id: `scripted-${++n}`,
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
    const ran = (tool) => results.find((r) => r.name === tool);
    let m;
    if (/\bhello\b/.test(said)) return text("Hello from the scripted model.");
    if (/\bfail\b/.test(said)) return "fail";
    if (/list the pages/.test(said)) {
      if (!ran("searchTools")) return toolCall("searchTools", { query: "pages" });
      if (!ran("getPage")) return toolCall("getPage", { all: true });
      return text("Here are the site's pages.");
    }
    if ((m = said.match(/archive page (\S+)/))) {
      const result = ran("deletePage");
      if (!result) return toolCall("deletePage", { ids: [m[1]] });
      const reason = result.content.match(/rejected this call: ([^"\\&]+)/);
      if (/REJECTED/.test(result.content)) return text(`Understood, I left it alone. You said: ${reason ? reason[1] : "no reason"}`);
      return text("The page is archived.");
    }
    return text("I can say hello, list the pages and archive a page.");
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
