#!/usr/bin/env bash
# HTTP benchmark of a release build on loopback.
#
# Seeds 1,000 pages and 10,000 posts (~2 KB markdown each), then drives the
# server with wrk at 32 connections for $DURATION seconds per scenario:
#   0) a bare axum handler (the ceiling: same machine, same run, no Quire)
#   a) GET a page by id; a page by slug (the getPage tool over REST); GET
#      the delivery page by slug
#   b) GET 20 posts filtered by status; GET 20 published posts with their
#      bodies (public delivery)
#   c) PATCH a post's title (one post); PATCH the title of a random post
#      among the 10,000
# and reports req/s, p50, p99, the server's RSS idle and at peak, the
# database and write-ahead log sizes before and after the random PATCH run,
# and how long a start takes after SIGTERM and after kill -9 under writes.
#
# `bench/run.sh synchronous` runs only the write scenarios (c1, c2) under
# both SQLite sync settings side by side on the same data: a server with
# `sqlite_synchronous = full` (the default) and one with `normal` take
# turns, ROUNDS times (the order swapped every round), then the medians of
# each and their ratio. Results land in bench/results/synchronous.md.
#
# Usage: bench/run.sh [synchronous]  (DURATION=20 CONNECTIONS=32 THREADS=2 ROUNDS=3 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
DURATION=${DURATION:-20}
CONNECTIONS=${CONNECTIONS:-32}
THREADS=${THREADS:-2}
ROUNDS=${ROUNDS:-3}
MODE=${1:-all}
case $MODE in all | synchronous) ;; *) echo "usage: bench/run.sh [synchronous]" >&2; exit 2 ;; esac
PORT=${PORT:-18181}
OUT=bench/results
DATA=$OUT/data
TOKEN=bench-token-0123456789abcdef

if ! command -v wrk >/dev/null; then
  echo "installing wrk" >&2
  (apt-get update -qq && apt-get install -y -qq wrk) >/dev/null 2>&1 || { sudo apt-get update -qq && sudo apt-get install -y -qq wrk; }
fi
# The server and the ceiling in one build of the whole workspace's features
# (as bench/backoffice.sh builds), so neither run rebuilds the other's crates;
# naming the binary matters: `--example` alone builds only the example.
cargo build --release -q --workspace --bin quire --example bare_axum
BIN=target/release/quire
BARE=target/release/examples/bare_axum
BARE_PORT=$((PORT + 1))
mkdir -p "$OUT"
rm -rf "$DATA"
LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
: > "$OUT/server.log"
echo "seeding 1,000 pages and 10,000 posts" >&2
QUIRE_LOG=warn $BIN seed --data "$DATA" --bench-pages 1000 --bench-posts 10000 >/dev/null

# SYNC: the server's sqlite_synchronous (empty: the default, full).
SYNC=
start_server() {
  QUIRE_SQLITE_SYNCHRONOUS=${SYNC:-full} QUIRE_LOG=warn QUIRE_BOOTSTRAP_TOKEN=$TOKEN $BIN serve --addr 127.0.0.1:$PORT --data "$DATA" >/dev/null 2>>"$OUT/server.log" &
  SERVER=$!
}
# ready_after SIGNAL: stops the server with SIGNAL, starts it again and
# prints the seconds until it answers /healthz.
# Runs in the shell that started the server (not in a $(...) subshell, which
# could neither wait for it nor keep the new one's pid); sets READY.
ready_after() {
  kill -"$1" "$SERVER"
  while kill -0 "$SERVER" 2>/dev/null; do sleep 0.05; done
  LEFT=$(sizes)
  local t0 t1
  t0=$(date +%s.%N)
  start_server
  wait_healthy "$PORT"
  t1=$(date +%s.%N)
  READY=$(echo "$t1 - $t0" | bc)
}
sizes() { # database and log sizes in MB
  local db wal
  db=$(stat -c %s "$DATA/quire.db")
  wal=$(stat -c %s "$DATA/quire.db-wal" 2>/dev/null || echo 0)
  printf 'quire.db %s MB, quire.db-wal %s MB' "$(echo "scale=1; $db/1048576" | bc)" "$(echo "scale=1; $wal/1048576" | bc)"
}
$BARE 127.0.0.1:$BARE_PORT &
BARE_PID=$!
start_server
trap 'kill $SERVER $BARE_PID 2>/dev/null || true' EXIT
wait_healthy "$PORT"
sleep 1
rss() { awk -v k="$1" '$1==k":" {print int($2/1024)}' /proc/$SERVER/status; }
IDLE_RSS=$(rss VmRSS)

B=http://127.0.0.1:$PORT
AUTH="Authorization: Bearer $TOKEN"
PAGE_ID=$(first_id "$B/api/v1/pages?limit=1&status=published" "$TOKEN")
POST_ID=$(first_id "$B/api/v1/collections/blog/entries?limit=1" "$TOKEN")

write_patch_lua "$OUT/patch.lua" "$TOKEN"
all_ids "$B/api/v1/collections/blog/entries" "$TOKEN" > "$OUT/post-ids.txt"
write_random_patch_lua "$OUT/patch-random.lua" "$TOKEN" "$OUT/post-ids.txt"
cat > "$OUT/page-by-slug.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer $TOKEN"
wrk.body = '{"slug":"bench-page-0"}'
LUA

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

# The write scenarios under both sync settings, alternated (see the top).
if [ "$MODE" = synchronous ]; then
  kill "$BARE_PID" 2>/dev/null || true
  stop_server() { kill "$SERVER"; wait "$SERVER" 2>/dev/null || true; }
  stop_server
  figures() { # name: req/s, p50, p99 and non-2xx of a finished wrk run
    run "$@" | awk -F' [|] ' '{print $2, $3, $4, $5 + 0}'
  }
  exec > >(tee "$OUT/synchronous.md")
  echo "| round | sqlite_synchronous | c1 req/s | c1 p50 | c1 p99 | c2 req/s | c2 p50 | c2 p99 | non-2xx |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
  : > "$OUT/synchronous.tsv"
  for round in $(seq 1 "$ROUNDS"); do
    order="full normal"
    [ $((round % 2)) -eq 0 ] && order="normal full"
    for SYNC in $order; do
      start_server
      wait_healthy "$PORT"
      sleep 0.5
      read -r r1 p1 q1 e1 < <(figures "c1-$SYNC-$round" "$B/api/v1/entries/$POST_ID" -s "$OUT/patch.lua")
      read -r r2 p2 q2 e2 < <(figures "c2-$SYNC-$round" "$B/api/v1/entries/$POST_ID" -s "$OUT/patch-random.lua")
      stop_server
      printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$round" "$SYNC" "$r1" "$p1" "$q1" "$r2" "$p2" "$q2" "$((e1 + e2))"
      printf '%s\t%s\t%s\n' "$SYNC" "$r1" "$r2" >> "$OUT/synchronous.tsv"
    done
  done
  echo
  python3 - "$OUT/synchronous.tsv" <<'PY'
import statistics, sys
rows = [line.split("\t") for line in open(sys.argv[1]).read().splitlines() if line]
for i, name in ((1, "c1 PATCH one post"), (2, "c2 PATCH a random post")):
    full, normal = (statistics.median(float(r[i]) for r in rows if r[0] == s) for s in ("full", "normal"))
    print(f"{name}: median full {full:,.0f} req/s, normal {normal:,.0f} req/s; full/normal {full / normal:.2f}")
PY
  echo
  echo "machine: $(nproc) cores, $(uname -sr); load average before: $LOAD; wrk -t$THREADS -c$CONNECTIONS -d${DURATION}s, $ROUNDS rounds"
  exit 0
fi

exec > >(tee "$OUT/summary.md")
{
  echo "| scenario | req/s | p50 | p99 | non-2xx |"
  echo "| --- | --- | --- | --- | --- |"
  run "0-bare-axum" "http://127.0.0.1:$BARE_PORT/"
  run "a1-page-by-id" "$B/api/v1/pages/$PAGE_ID" -H "$AUTH"
  run "a2-page-by-slug" "$B/api/v1/tools/getPage/invoke" -s "$OUT/page-by-slug.lua"
  run "a3-delivery-page" "$B/api/v1/delivery/pages/bench-page-0"
  run "b1-posts-by-status" "$B/api/v1/collections/blog/entries?status=published&limit=20" -H "$AUTH"
  run "b2-published-posts-with-bodies" "$B/api/v1/delivery/collections/blog/entries?limit=20"
  run "c1-patch-one-post" "$B/api/v1/entries/$POST_ID" -s "$OUT/patch.lua"
  BEFORE=$(sizes)
  run "c2-patch-random-post" "$B/api/v1/entries/$POST_ID" -s "$OUT/patch-random.lua"
  AFTER=$(sizes)
  PEAK=$(rss VmHWM)
  echo
  echo "server RSS: idle ${IDLE_RSS} MB, peak ${PEAK} MB"
  echo "before c2: $BEFORE; after c2: $AFTER"
  ready_after TERM
  echo "ready after SIGTERM: $READY s (the stopped server left $LEFT)"
  # kill -9 in the middle of random PATCHes: the log is as large as it gets
  wrk -t"$THREADS" -c"$CONNECTIONS" -d8s -s "$OUT/patch-random.lua" "$B/api/v1/entries/$POST_ID" >/dev/null 2>&1 &
  LOAD_PID=$!
  sleep 6
  ready_after KILL
  wait "$LOAD_PID" || true
  echo "ready after kill -9 under random PATCHes: $READY s (the killed server left $LEFT)"
  echo "load average before the run: $LOAD"
  echo "machine: $(nproc) cores, $(uname -sr); wrk -t$THREADS -c$CONNECTIONS -d${DURATION}s on loopback, same machine"
}
