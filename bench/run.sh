#!/usr/bin/env bash
# HTTP benchmark of a release build on loopback.
#
# Seeds 1,000 pages and 10,000 posts (~2 KB markdown each), then drives the
# server with wrk at 32 connections for $DURATION seconds per scenario:
#   a) GET a page by id; GET the delivery page by slug
#   b) GET 20 posts filtered by status
#   c) PATCH a post's title
# and reports req/s, p50, p99, and the server's RSS idle and at peak.
#
# Usage: bench/run.sh            (DURATION=20 CONNECTIONS=32 THREADS=2 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
DURATION=${DURATION:-20}
CONNECTIONS=${CONNECTIONS:-32}
THREADS=${THREADS:-2}
PORT=${PORT:-18181}
OUT=bench/results
DATA=$OUT/data
TOKEN=bench-token-0123456789abcdef

if ! command -v wrk >/dev/null; then
  echo "installing wrk" >&2
  (apt-get update -qq && apt-get install -y -qq wrk) >/dev/null 2>&1 || { sudo apt-get update -qq && sudo apt-get install -y -qq wrk; }
fi
cargo build --release -q
BIN=target/release/quire
mkdir -p "$OUT"
rm -rf "$DATA"
echo "seeding 1,000 pages and 10,000 posts" >&2
QUIRE_LOG=warn $BIN seed --data "$DATA" --bench-pages 1000 --bench-posts 10000 >/dev/null

QUIRE_LOG=warn QUIRE_BOOTSTRAP_TOKEN=$TOKEN $BIN serve --addr 127.0.0.1:$PORT --data "$DATA" >/dev/null 2>"$OUT/server.log" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
wait_healthy "$PORT"
sleep 1
rss() { awk -v k="$1" '$1==k":" {print int($2/1024)}' /proc/$SERVER/status; }
IDLE_RSS=$(rss VmRSS)

B=http://127.0.0.1:$PORT
AUTH="Authorization: Bearer $TOKEN"
PAGE_ID=$(first_id "$B/api/v1/pages?limit=1&status=published" "$TOKEN")
POST_ID=$(first_id "$B/api/v1/collections/blog/entries?limit=1" "$TOKEN")

write_patch_lua "$OUT/patch.lua" "$TOKEN"

run() { # name, url, extra wrk args...
  local name=$1 url=$2; shift 2
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency "$@" "$url" > "$OUT/$name.txt"
  local rps p50 p99 errors
  rps=$(awk '/Requests\/sec/ {print $2}' "$OUT/$name.txt")
  p50=$(awk '$1=="50%" {print $2}' "$OUT/$name.txt")
  p99=$(awk '$1=="99%" {print $2}' "$OUT/$name.txt")
  errors=$(awk '/Non-2xx/ {print $5}' "$OUT/$name.txt")
  printf '| %s | %s | %s | %s | %s |\n' "$name" "$rps" "$p50" "$p99" "${errors:-0}"
}

{
  echo "| scenario | req/s | p50 | p99 | non-2xx |"
  echo "| --- | --- | --- | --- | --- |"
  run "a1-page-by-id" "$B/api/v1/pages/$PAGE_ID" -H "$AUTH"
  run "a2-delivery-page" "$B/api/v1/delivery/pages/bench-page-0"
  run "b-posts-by-status" "$B/api/v1/collections/blog/entries?status=published&limit=20" -H "$AUTH"
  run "c-patch-post-title" "$B/api/v1/entries/$POST_ID" -s "$OUT/patch.lua"
  echo
  echo "server RSS: idle ${IDLE_RSS} MB, peak $(rss VmHWM) MB"
  echo "machine: $(nproc) cores, $(uname -sr); wrk -t$THREADS -c$CONNECTIONS -d${DURATION}s on loopback, same machine"
} | tee "$OUT/summary.md"
