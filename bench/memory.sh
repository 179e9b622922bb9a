#!/usr/bin/env bash
# A server's memory, idle and after writes: the resident set (RSS, and its
# anonymous and file-backed parts, from /proc/PID/status) of each binary
# given, on the bench site (1,000 pages, 10,000 posts): 5 s and 15 s after
# start, at the end of DURATION seconds of random PATCHes (wrk -t2 -c32),
# then every 10 s for a minute of idleness. The store gives its caches back
# once no commit changed anything for 10 s, and the process its spare
# memory with them (crates/quire/src/memory.rs).
#
# Usage: bench/memory.sh BIN [BIN...]     (DURATION=15 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
DURATION=${DURATION:-15}
PORT=${PORT:-18284}
OUT=bench/results/memory
TOKEN=bench-token-0123456789abcdef
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk; } >/dev/null 2>&1
mkdir -p "$OUT"
rm -rf "$OUT/data" "$OUT/ids.txt"
QUIRE_LOG=warn "$1" seed --data "$OUT/data" --bench-pages 1000 --bench-posts 10000 >/dev/null

rss() {
  awk '/^(VmRSS|RssAnon|RssFile):/ {printf "%s %d MB  ", $1, $2 / 1024}' "/proc/$1/status"
}

for bin in "$@"; do
  rm -rf "$OUT/run" && cp -r "$OUT/data" "$OUT/run"
  QUIRE_LOG=warn QUIRE_BOOTSTRAP_TOKEN=$TOKEN "$bin" serve --addr 127.0.0.1:$PORT --data "$OUT/run" >/dev/null 2>>"$OUT/server.log" &
  server=$!
  wait_healthy "$PORT"
  base=http://127.0.0.1:$PORT
  if [[ ! -s $OUT/ids.txt ]]; then
    all_ids "$base/api/v1/collections/blog/entries" "$TOKEN" > "$OUT/ids.txt"
    write_random_patch_lua "$OUT/patch-random.lua" "$TOKEN" "$OUT/ids.txt"
  fi
  post=$(head -1 "$OUT/ids.txt")
  echo "== $bin"
  sleep 5; echo "idle 5 s:        $(rss $server)"
  sleep 10; echo "idle 15 s:       $(rss $server)"
  wrk -t2 -c32 -d"${DURATION}s" -s "$OUT/patch-random.lua" "$base/api/v1/entries/$post" | awk '/Requests\/sec/ {print "random PATCH: " $2 " req/s"}'
  echo "after PATCHes:   $(rss $server)"
  for t in 10 20 30 40 50 60; do
    sleep 10; echo "idle $t s after: $(rss $server)"
  done
  kill "$server"; wait "$server" 2>/dev/null || true
done
