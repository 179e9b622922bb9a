"""Webhooks of a running `quire serve`, checked by a receiver we did not
sign for: every delivery's signature is verified by the `standardwebhooks`
package from PyPI (pip install standardwebhooks), not by Quire's code.

1,000 changes are made while the receiver fails the first two attempts of
every delivery; the server is killed with SIGKILL half-way and started
again on the same data. Then every change has been delivered, in order per
record, and any duplicate carries the same webhook-id and payload (as the
Standard Webhooks specification allows).

Run: python3 tests/webhooks/test_webhooks.py   (QUIRE_BIN picks the binary; default target/debug/quire)
"""

import json
import os
import re
import subprocess
import tempfile
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

BIN = os.path.abspath(os.environ.get("QUIRE_BIN", "target/debug/quire"))
TOKEN = "webhook-test-token-0123456789abcdef"
CHANGES = 1000
PAGES = 20


class Receiver:
    """Fails the first two attempts of each delivery, then verifies and keeps it."""

    def __init__(self):
        self.secret = None
        self.lock = threading.Lock()
        self.tries = {}
        self.kept = []  # (webhook-id, payload) in arrival order
        self.bad = []

    def handle(self, headers, body):
        msg_id = headers.get("webhook-id", "")
        with self.lock:
            self.tries[msg_id] = self.tries.get(msg_id, 0) + 1
            if self.tries[msg_id] <= 2:
                return 500
            try:
                payload = Webhook(self.secret).verify(body, dict(headers))
            except WebhookVerificationError as e:
                self.bad.append((msg_id, str(e)))
                return 400
            self.kept.append((msg_id, payload))
            return 204


def serve_receiver(receiver):
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            status = receiver.handle({k.lower(): v for k, v in self.headers.items()}, body)
            self.send_response(status)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def start_server(data, config):
    env = dict(os.environ, QUIRE_BOOTSTRAP_TOKEN=TOKEN, QUIRE_LOG="warn", QUIRE_CONFIG=config)
    proc = subprocess.Popen(
        [BIN, "serve", "--addr", "127.0.0.1:0", "--data", data],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    deadline = time.time() + 60
    seen = []
    while time.time() < deadline:
        line = proc.stderr.readline()
        seen.append(line)
        match = re.search(r"listening on http://(\S+)", line)
        if match:
            threading.Thread(target=lambda: proc.stderr.read(), daemon=True).start()
            return proc, match.group(1)
        if line == "" and proc.poll() is not None:
            break
    proc.kill()
    raise RuntimeError(f"server did not start (exit {proc.poll()}): {''.join(seen)[-2000:]}")


def api(addr, method, path, body=None):
    request = urllib.request.Request(
        f"http://{addr}{path}",
        method=method,
        data=json.dumps(body).encode() if body is not None else None,
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read() or b"null")


def change_ids(addr, after):
    """Every change id of the site above `after`."""
    ids, cursor = [], None
    while True:
        path = "/api/v1/changes?limit=100" + (f"&cursor={cursor}" if cursor else "")
        page = api(addr, "GET", path)
        ids += [c["id"] for c in page["items"] if c["id"] > after]
        cursor = page.get("nextCursor")
        if not cursor or page["items"][-1]["id"] <= after:
            return set(ids)


def main():
    receiver = Receiver()
    hook_server = serve_receiver(receiver)
    with tempfile.TemporaryDirectory() as data:
        config = os.path.join(data, "quire.toml")
        with open(config, "w") as f:
            f.write('webhook_retry_ms = [50, 50, 50, 50, 50, 50, 50, 50]\n[http]\nallow = ["127.0.0.1"]\n')
        proc, addr = start_server(data, config)
        try:
            made = api(addr, "POST", "/api/v1/webhooks", {"url": f"http://127.0.0.1:{hook_server.server_port}/hook"})
            receiver.secret = made["secret"]
            assert receiver.secret.startswith("whsec_"), made
            first = api(addr, "GET", "/api/v1/changes?limit=1")["items"][0]["id"]

            pages = []
            for i in range(PAGES):
                page = api(addr, "POST", "/api/v1/pages", {"name": f"Hook {i}", "slug": f"hook-{i}"})
                pages.append(page["id"])
            for n in range(CHANGES - PAGES):
                if n == (CHANGES - PAGES) // 2:
                    # Killed in the middle of its work: no chance to finish anything.
                    proc.kill()
                    proc.wait()
                    proc, addr = start_server(data, config)
                page = pages[n % PAGES]
                api(addr, "PATCH", f"/api/v1/pages/{page}", {"name": f"Hook {n % PAGES}, take {n}"})

            expected = change_ids(addr, first)
            assert len(expected) == CHANGES, len(expected)
            deadline = time.time() + 240
            while time.time() < deadline:
                with receiver.lock:
                    delivered = {p["data"]["changeId"] for _, p in receiver.kept}
                if expected <= delivered:
                    break
                time.sleep(0.5)
            with receiver.lock:
                kept, bad = list(receiver.kept), list(receiver.bad)
        finally:
            proc.kill()
            hook_server.shutdown()

    assert not bad, f"signatures refused by standardwebhooks: {bad[:3]}"
    delivered = {p["data"]["changeId"] for _, p in kept}
    missing = expected - delivered
    assert not missing, f"{len(missing)} changes never delivered, e.g. {sorted(missing)[:5]}"
    assert delivered <= expected, "an event no change made"
    # Duplicates only as the specification allows: the same id, the same payload.
    by_id = {}
    for msg_id, payload in kept:
        assert by_id.setdefault(msg_id, payload) == payload, f"{msg_id} sent with two payloads"
    assert len(by_id) == CHANGES, f"{len(by_id)} distinct webhook-ids for {CHANGES} changes"
    # In order per record: each record's first deliveries follow its changes.
    firsts, seen = {}, set()
    for msg_id, payload in kept:
        if msg_id in seen:
            continue
        seen.add(msg_id)
        firsts.setdefault(payload["data"]["id"], []).append(payload["data"]["changeId"])
    for record, order in firsts.items():
        assert order == sorted(order), f"{record}'s events out of order: {order[:10]}"
    duplicates = len(kept) - len(by_id)
    print(
        f"webhooks: {CHANGES} changes, {len(by_id)} deliveries verified by standardwebhooks, "
        f"in order per record across a SIGKILL, {duplicates} duplicate(s) with the same webhook-id"
    )


if __name__ == "__main__":
    main()
