"""Quire's agents as OpenAI-compatible models, through the official `openai`
Python client, unmodified, set up as docs/agent.md says (base URL
`<server>/v1`, an API token as the key): the models listed, a completion
whole and streamed (raw chunks and the client's stream helper), a
conversation that continues its session, a turn that pauses for approval
and goes on once approved, and refusals as the client's typed errors.

`quire serve` runs on a scripted OpenAI-compatible model (below, the same
script as the Node suite's `tests/agui/scripted-model.mjs`).

Run: python3 tests/openai/test_openai.py   (QUIRE_BIN picks the binary;
default target/debug/quire). Needs `openai` (scripts/test installs the
pinned version into a virtualenv).
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import openai

BIN = os.path.abspath(os.environ.get("QUIRE_BIN", "target/debug/quire"))


class ScriptedModel(BaseHTTPRequestHandler):
    """Answers as a model would, from the person's last message: "hello" a
    text; "list the pages" searchTools, getPage, then a text; "archive page
    <id>" deletePage (which waits for a person), then a text; "fail" a 400."""

    calls = 0

    def do_POST(self):  # noqa: N802 (the handler's name)
        body = json.loads(self.rfile.read(int(self.headers["content-length"])) or "{}")
        message = self.answer(body.get("messages", []))
        if message == "fail":
            return self.reply(400, {"error": {"message": "the scripted model refuses this request"}})
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        choice = {"index": 0, "message": message, "finish_reason": finish}
        self.reply(200, {"id": "scripted", "object": "chat.completion", "choices": [choice], "usage": usage})

    def answer(self, messages):
        last = max(i for i, m in enumerate(messages) if m["role"] == "user")
        said = str(messages[last].get("content") or "")
        names = {c["id"]: c["function"]["name"] for m in messages[last + 1 :] for c in m.get("tool_calls") or []}
        ran = {names.get(m.get("tool_call_id")): str(m["content"]) for m in messages[last + 1 :] if m["role"] == "tool"}
        if re.search(r"\bhello\b", said):
            return {"role": "assistant", "content": "Hello from the scripted model."}
        if re.search(r"\bfail\b", said):
            return "fail"
        if "list the pages" in said:
            if "searchTools" not in ran:
                return self.call("searchTools", {"query": "pages"})
            if "getPage" not in ran:
                return self.call("getPage", {"all": True})
            return {"role": "assistant", "content": "Here are the site's pages."}
        archive = re.search(r"archive page (\S+)", said)
        if archive:
            if "deletePage" not in ran:
                return self.call("deletePage", {"ids": [archive.group(1)]})
            return {"role": "assistant", "content": "The page is archived."}
        return {"role": "assistant", "content": "I can say hello, list the pages and archive a page."}

    def call(self, name, args):
        ScriptedModel.calls += 1
        call = {"id": f"call_{ScriptedModel.calls}", "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)}}
        return {"role": "assistant", "content": None, "tool_calls": [call]}

    def reply(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def start_server(data, model_url):
    """`quire serve` on a free port with an empty data directory (the demo
    site); answers the process, its base URL and the admin token it prints."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("QUIRE_")}
    env.update(QUIRE_LOG="warn", QUIRE_LLM_PROVIDER="openai", QUIRE_LLM_BASE_URL=model_url,
               QUIRE_LLM_MODEL="scripted", QUIRE_LLM_API_KEY="not-a-real-key")
    proc = subprocess.Popen([BIN, "serve", "--addr", "127.0.0.1:0", "--data", data], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    found = {}

    def read(stream, key, pattern):
        seen = ""
        for line in stream:
            seen += line
            match = re.search(pattern, seen)
            if match and key not in found:
                found[key] = match.group(1)

    threading.Thread(target=read, args=(proc.stderr, "base", r"listening on (http://\S+)"), daemon=True).start()
    threading.Thread(target=read, args=(proc.stdout, "token", r"Admin token[^\n]*\n\s*\n\s*(\S+)"), daemon=True).start()
    deadline = time.time() + 60
    while time.time() < deadline and len(found) < 2:
        if proc.poll() is not None:
            raise RuntimeError(f"quire serve exited ({proc.returncode})")
        time.sleep(0.05)
    if len(found) < 2:
        proc.kill()
        raise RuntimeError("quire serve did not start")
    return proc, found["base"], found["token"]


def rest(base, token, method, path):
    """A REST call with the admin token: (status, JSON body)."""
    request = urllib.request.Request(f"{base}{path}", method=method, headers={"authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status, json.load(reply)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)


def session_of(content):
    match = re.search(r"\n\[quire-session\]: (\S+)$", content)
    assert match, f"no session line: {content!r}"
    return match.group(1)


def expect(error, call):
    """Runs `call`, which must raise `error`; answers the exception."""
    try:
        call()
    except error as e:
        return e
    raise AssertionError(f"expected {error.__name__}")


def check(base, token):
    # No retries: a refusal is answered once, and a retried turn would be a second turn.
    client = openai.OpenAI(base_url=f"{base}/v1", api_key=token, max_retries=0)

    models = [m for m in client.models.list()]
    assert "editor" in [m.id for m in models], models
    assert all(m.object == "model" and m.owned_by == "quire" and isinstance(m.created, int) for m in models)
    assert client.models.retrieve("editor").id == "editor"
    print(f"models: {', '.join(m.id for m in models)}")

    first = client.chat.completions.create(model="editor", messages=[{"role": "user", "content": "hello"}])
    content = first.choices[0].message.content
    assert first.object == "chat.completion" and first.model == "editor", first
    assert first.choices[0].finish_reason == "stop"
    assert content.startswith("Hello from the scripted model."), content
    assert first.usage.total_tokens >= 0
    session = session_of(content)
    conversation = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": content}]
    nxt = client.chat.completions.create(
        model="editor", messages=conversation + [{"role": "user", "content": "list the pages"}]
    )
    text = nxt.choices[0].message.content
    assert text.startswith("Here are the site's pages."), text
    assert session_of(text) == session
    status, stored = rest(base, token, "GET", f"/api/v1/sessions/{session}")
    assert status == 200 and stored["session"]["turns"] == 2, stored["session"]
    print(f"completion: a turn, and the conversation continues session {session}")

    stream = client.chat.completions.create(
        model="editor", messages=[{"role": "user", "content": "hello"}], stream=True,
        stream_options={"include_usage": True},
    )
    pieces, finish, usage, ids = [], None, None, set()
    for chunk in stream:
        assert chunk.object == "chat.completion.chunk", chunk
        ids.add(chunk.id)
        usage = chunk.usage or usage
        for choice in chunk.choices:
            pieces.append(choice.delta.content or "")
            finish = choice.finish_reason or finish
    text = "".join(pieces)
    assert len(ids) == 1 and finish == "stop" and usage is not None, (ids, finish, usage)
    assert text.startswith("Hello from the scripted model."), text
    session_of(text)
    with client.chat.completions.stream(model="editor", messages=[{"role": "user", "content": "hello"}]) as helper:
        for _ in helper:
            pass
        whole = helper.get_final_completion()
    assert whole.choices[0].message.content.startswith("Hello from the scripted model.")
    print("stream: chunks, usage, [DONE], and the client's stream helper")

    status, pages = rest(base, token, "GET", "/api/v1/pages?limit=100")
    contact = next(p for p in pages["items"] if p["slug"] == "contact")
    said = f"archive page {contact['id']}"
    paused = client.chat.completions.create(model="editor", messages=[{"role": "user", "content": said}])
    content = paused.choices[0].message.content
    assert content.startswith("This turn waits for a person's approval"), content
    assert f"{base}/approvals" in content, content
    approval = re.search(r"approval `([^`]+)`", content).group(1)
    assert f"POST {base}/api/v1/approvals/{approval}/approve" in content, content
    session = session_of(content)
    conversation = [{"role": "user", "content": said}, {"role": "assistant", "content": content}]
    waiting = client.chat.completions.create(
        model="editor", messages=conversation + [{"role": "user", "content": "well?"}], stream=True
    )
    again = "".join(c.choices[0].delta.content or "" for c in waiting if c.choices)
    assert f"approval `{approval}`" in again, again
    status, body = rest(base, token, "POST", f"/api/v1/approvals/{approval}/approve")
    assert status == 200, body
    for _ in range(100):
        if rest(base, token, "GET", f"/api/v1/sessions/{session}")[1]["session"]["status"] == "idle":
            break
        time.sleep(0.05)
    assert rest(base, token, "GET", f"/api/v1/pages/{contact['id']}")[0] == 404, "the page is archived"
    thanks = client.chat.completions.create(
        model="editor", messages=conversation + [{"role": "user", "content": "thanks"}]
    )
    assert session_of(thanks.choices[0].message.content) == session
    print(f"pause: approval {approval} named with where to answer it; approved, session {session} goes on")

    stranger = openai.OpenAI(base_url=f"{base}/v1", api_key="qk_not-a-token", max_retries=0)
    e = expect(openai.AuthenticationError, lambda: stranger.models.list())
    assert e.code == "invalid_api_key", e.body
    hi = [{"role": "user", "content": "hi"}]
    e = expect(openai.NotFoundError, lambda: client.chat.completions.create(model="nobody", messages=hi))
    assert e.code == "model_not_found" and e.param == "model", e.body
    last = hi + [{"role": "assistant", "content": "hello"}]
    e = expect(openai.UnprocessableEntityError, lambda: client.chat.completions.create(model="editor", messages=last))
    assert e.param == "messages.1.role" and "person's" in e.message, e.body
    fail = [{"role": "user", "content": "fail"}]
    e = expect(openai.InternalServerError, lambda: client.chat.completions.create(model="editor", messages=fail))
    assert e.status_code == 502 and e.code == "model_error", e.body
    e = expect(openai.APIError, lambda: list(client.chat.completions.create(model="editor", messages=fail, stream=True)))
    assert "refuses this request" in e.message, e.message
    print("refusals: AuthenticationError, NotFoundError, UnprocessableEntityError, InternalServerError, a stream's APIError")


def main():
    model = ThreadingHTTPServer(("127.0.0.1", 0), ScriptedModel)
    threading.Thread(target=model.serve_forever, daemon=True).start()
    with tempfile.TemporaryDirectory(prefix="quire-openai-") as data:
        proc, base, token = start_server(data, f"http://127.0.0.1:{model.server_address[1]}/v1")
        try:
            check(base, token)
        finally:
            proc.terminate()
            proc.wait()
            model.shutdown()
    print(f"OpenAI Python client {openai.__version__}: all checks passed")


if __name__ == "__main__":
    main()
    sys.exit(0)
