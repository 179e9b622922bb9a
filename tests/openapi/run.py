"""OpenAPI conformance of `quire serve`: the document at /api/openapi.json
validates as OpenAPI 3.1 (openapi-spec-validator), and schemathesis, with
every check and its stateful phase, finds no failure against a freshly
seeded server.

Run: python3 tests/openapi/run.py   (QUIRE_BIN picks the binary; default
target/debug/quire). Needs `schemathesis` and `openapi-spec-validator` (see
scripts/test, which installs the pinned versions into a virtualenv).
Environment: OPENAPI_MAX_EXAMPLES (default 25) bounds the cases per
operation, OPENAPI_SEED fixes the random seed.
"""

import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.abspath(os.environ.get("QUIRE_BIN", "target/debug/quire"))
TOKEN = "qk_openapi-conformance-0123456789abcdef"
MAX_EXAMPLES = os.environ.get("OPENAPI_MAX_EXAMPLES", "25")
SEED = os.environ.get("OPENAPI_SEED", "20261123")


def start_server(data: str):
    env = dict(os.environ, QUIRE_BOOTSTRAP_TOKEN=TOKEN, QUIRE_LOG="warn")
    log = open(os.path.join(data, "server.log"), "w")
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
            # Keep draining stderr into a file so the server never blocks on it.
            def drain():
                for rest in proc.stderr:
                    log.write(rest)
                    log.flush()

            import threading

            threading.Thread(target=drain, daemon=True).start()
            return proc, match.group(1)
        if line == "" and proc.poll() is not None:
            break
    proc.kill()
    raise RuntimeError(f"server did not start (exit {proc.poll()}): {''.join(seen)[-2000:]}")


def tool(name: str) -> str:
    """The console script `name` beside this Python (the virtualenv's)."""
    beside = os.path.join(os.path.dirname(sys.executable), name)
    return beside if os.path.exists(beside) else (shutil.which(name) or name)


def validate(addr: str, data: str) -> None:
    with urllib.request.urlopen(f"http://{addr}/api/openapi.json", timeout=30) as reply:
        document = json.load(reply)
    path = os.path.join(data, "openapi.json")
    with open(path, "w") as f:
        json.dump(document, f)
    from openapi_spec_validator import validate as validate_spec

    validate_spec(document)
    operations = sum(
        1 for item in document["paths"].values() for method in item if method in {"get", "post", "patch", "put", "delete"}
    )
    print(f"openapi-spec-validator: OpenAPI {document['openapi']} document valid ({operations} operations)")


def schemathesis(addr: str, data: str) -> int:
    reports = os.path.join(data, "reports")
    command = [
        tool("schemathesis"),
        "--config-file",
        os.path.join(HERE, "schemathesis.toml"),
        "run",
        f"http://{addr}/api/openapi.json",
        "--checks",
        "all",
        "--phases",
        "examples,coverage,fuzzing,stateful",
        "--header",
        f"Authorization: Bearer {TOKEN}",
        "--max-examples",
        MAX_EXAMPLES,
        "--seed",
        SEED,
        "--workers",
        "1",
        "--report",
        "junit,ndjson",
        "--report-dir",
        reports,
    ]
    print("running:", " ".join(c if "Bearer" not in c else "Authorization: Bearer ***" for c in command), flush=True)
    # Run inside the temporary folder: schemathesis and hypothesis keep
    # their caches in the working directory.
    proc = subprocess.Popen(
        command, cwd=data, env=dict(os.environ, NO_COLOR="1"), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    output = []
    for line in proc.stdout:
        print(line, end="", flush=True)
        output.append(line)
    code = proc.wait()
    summarize("".join(output), reports)
    return code


def summarize(output: str, reports: str) -> None:
    """One line with the operations tested, the test cases and the failures."""
    import xml.etree.ElementTree as ET

    tested = re.search(r"Tested: (\d+)", output)
    cases = re.search(r"(\d+) generated, (?:(\d+) passed|(\d+) found (\d+) unique failures)", output)
    failures = 0
    for path in glob.glob(os.path.join(reports, "*.xml")):
        root = ET.parse(path).getroot()
        suites = [root] if root.tag == "testsuite" else list(root)
        failures += sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
    print(
        f"schemathesis: {tested.group(1) if tested else '?'} operations, "
        f"{cases.group(1) if cases else '?'} test cases, {failures} failing operations/scenarios"
    )


def main() -> int:
    data = tempfile.mkdtemp(prefix="quire-openapi-")
    proc, addr = start_server(data)
    try:
        validate(addr, data)
        code = schemathesis(addr, data)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
    if code != 0:
        print(f"schemathesis reported failures (exit {code}); server log and reports in {data}", file=sys.stderr)
        return code
    shutil.rmtree(data, ignore_errors=True)
    print("OpenAPI conformance: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
