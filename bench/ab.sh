#!/usr/bin/env bash
# Side-by-side comparison of two release binaries on the same data: the
# servers take turns, ROUNDS times, each running the PATCH scenario (c), the
# page-by-id scenario (a), and the public delivery of a page (d) and of the
# header menu (n), DURATION seconds each.
#
# Usage: bench/ab.sh BIN_A BIN_B     (ROUNDS=3 DURATION=8 CONNECTIONS=32 by default)
# Build the two binaries first, e.g. from two commits, and copy them aside.
# With B_WEBHOOK=1, B's site has one webhook subscribed to every event
# (at a closed port of this machine, so each delivery is enqueued with its
# change and its attempt fails at once): the cost of the outbox on writes.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
A=$1 B=$2
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-8}
CONNECTIONS=${CONNECTIONS:-32}
PORT=${PORT:-18282}
OUT=bench/results/ab
DATA=$OUT/data
TOKEN=bench-token-0123456789abcdef
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk; } >/dev/null 2>&1
mkdir -p "$OUT"
rm -rf "$DATA" "$DATA-a" "$DATA-b"
QUIRE_LOG=warn "$A" seed --data "$DATA" --bench-pages 1000 --bench-posts 10000 >/dev/null
# Each binary serves a copy of its own: B may migrate the database to a
# schema A cannot open.
cp -r "$DATA" "$DATA-a"
cp -r "$DATA" "$DATA-b"

write_patch_lua "$OUT/patch.lua" "$TOKEN"

printf '[http]\nallow = ["127.0.0.1"]\n' > "$OUT/webhook.toml"

one() { # label, binary, data folder, webhook (1: subscribe one)
  local label=$1 bin=$2 data=$3 hook=${4:-0}
  local config=()
  [ "$hook" = 1 ] && config=(--config "$OUT/webhook.toml")
  QUIRE_LOG=warn QUIRE_BOOTSTRAP_TOKEN=$TOKEN "$bin" "${config[@]}" serve --addr 127.0.0.1:$PORT --data "$data" >/dev/null 2>>"$OUT/server.log" &
  local server=$!
  wait_healthy "$PORT"
  sleep 0.5
  local base=http://127.0.0.1:$PORT auth="Authorization: Bearer $TOKEN"
  if [ "$hook" = 1 ] && ! curl -sf -H "$auth" "$base/api/v1/webhooks" | grep -q hook; then
    curl -sf -H "$auth" -H 'content-type: application/json' -d '{"url":"http://127.0.0.1:9/hook"}' "$base/api/v1/webhooks" >/dev/null
  fi
  local post page
  post=$(first_id "$base/api/v1/collections/blog/entries?limit=1" "$TOKEN")
  page=$(first_id "$base/api/v1/pages?limit=1&status=published" "$TOKEN")
  local c a d n
  local rate='/Requests\/sec/ {print $2}'
  c=$(wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" --latency -s "$OUT/patch.lua" "$base/api/v1/entries/$post" | awk '/Requests\/sec/ {print $2} $1=="99%" {p=$2} END {print p}' | paste -sd' ')
  a=$(wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" -H "$auth" "$base/api/v1/pages/$page" | awk "$rate")
  d=$(wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" "$base/api/v1/delivery/pages/bench-page-0" | awk "$rate")
  n=$(wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" "$base/api/v1/delivery/navigations/header" | awk "$rate")
  kill "$server"; wait "$server" 2>/dev/null || true
  printf '| %s | %s | %s | %s | %s |\n' "$label" "$c" "$a" "$d" "$n"
}

{
  echo "| binary | (c) PATCH req/s, p99 | (a) GET by id req/s | (d) delivery page req/s | (n) delivery menu req/s |"
  echo "| --- | --- | --- | --- | --- |"
  for round in $(seq 1 "$ROUNDS"); do
    one "A round $round" "$A" "$DATA-a"
    one "B round $round" "$B" "$DATA-b" "${B_WEBHOOK:-0}"
  done
  echo
  echo "A: $A  B: $B  machine: $(nproc) cores; wrk -t2 -c$CONNECTIONS -d${DURATION}s on loopback"
} | tee "$OUT/summary.md"
