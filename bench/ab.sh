#!/usr/bin/env bash
# Side-by-side comparison of two release binaries on the same data: the
# servers take turns, ROUNDS times, each running the PATCH scenario (c), the
# page-by-id scenario (a), the public delivery of a page (d) and of the
# header menu (n), and the lists of 20 published posts with their bodies
# over REST (b1, `?status=published&limit=20`) and on delivery (b2),
# DURATION seconds each; on request (SCENARIOS), a PATCH of the title of a
# random post among the 10,000 (r), and a page by its slug through the
# getPage tool over REST (s). Each figure is req/s, then the server's
# CPU time per request in ms (user + system, from /proc) and, for the
# writes, the bytes the server wrote per request (`wchar` of /proc/PID/io:
# the log's frames and the checkpoints' copies) and the p99; the medians of
# each side and B's ratio to A follow the rounds.
#
# Usage: bench/ab.sh BIN_A BIN_B     (ROUNDS=3 DURATION=8 CONNECTIONS=32 by default)
# SCENARIOS="b1 b2" runs only those (default: c a d n b1 b2).
# Build the two binaries first, e.g. from two commits, and copy them aside.
# With B_WEBHOOK=1, B's site has one webhook subscribed to every event
# (at a closed port of this machine, so each delivery is enqueued with its
# change and its attempt fails at once): the cost of the outbox on writes.
# With BARE=path (bench/run.sh's bare axum handler, built by
# `cargo build --release -p quire-server --example bare_axum`), every round
# measures it first, on PORT+1, and the medians say each side's share of it.
# Data and figures go to OUT (default bench/results/ab-PORT): runs at once
# need different PORTs, and so write apart.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
A=$1 B=$2
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-8}
CONNECTIONS=${CONNECTIONS:-32}
SCENARIOS=${SCENARIOS:-c a d n b1 b2}
PORT=${PORT:-18282}
OUT=${OUT:-bench/results/ab-$PORT}
DATA=$OUT/data
IDS=$OUT/post-ids.txt
TOKEN=bench-token-0123456789abcdef
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk; } >/dev/null 2>&1
mkdir -p "$OUT"
rm -rf "$DATA" "$DATA-a" "$DATA-b" "$IDS"
QUIRE_LOG=warn "$A" seed --data "$DATA" --bench-pages 1000 --bench-posts 10000 >/dev/null
# Each binary serves a copy of its own: B may migrate the database to a
# schema A cannot open.
cp -r "$DATA" "$DATA-a"
cp -r "$DATA" "$DATA-b"

write_patch_lua "$OUT/patch.lua" "$TOKEN"
cat > "$OUT/page-by-slug.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer $TOKEN"
wrk.body = '{"slug":"bench-page-0"}'
LUA

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
  if [[ " $SCENARIOS " == *" r "* && ! -s $IDS ]]; then
    all_ids "$base/api/v1/collections/blog/entries" "$TOKEN" > "$IDS"
    write_random_patch_lua "$OUT/patch-random.lua" "$TOKEN" "$IDS"
  fi
  local line="| $label |" name
  for name in $SCENARIOS; do
    local args=()
    case $name in
      c) args=(--latency -s "$OUT/patch.lua" "$base/api/v1/entries/$post") ;;
      r) args=(--latency -s "$OUT/patch-random.lua" "$base/api/v1/entries/$post") ;;
      a) args=(-H "$auth" "$base/api/v1/pages/$page") ;;
      s) args=(-s "$OUT/page-by-slug.lua" "$base/api/v1/tools/getPage/invoke") ;;
      d) args=("$base/api/v1/delivery/pages/bench-page-0") ;;
      n) args=("$base/api/v1/delivery/navigations/header") ;;
      b1) args=(-H "$auth" "$base/api/v1/collections/blog/entries?status=published&limit=20") ;;
      b2) args=("$base/api/v1/delivery/collections/blog/entries?limit=20") ;;
      *) echo "unknown scenario $name" >&2; exit 2 ;;
    esac
    local before after figures rps count p99 cpu wrote0 wrote1 written=
    before=$(cpu_ticks "$server")
    wrote0=$(written_bytes "$server")
    figures=$(wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" "${args[@]}" | awk '/Requests\/sec/ {r=$2} / requests in / {n=$1} $1=="99%" {p=$2} END {print r, n, p}')
    after=$(cpu_ticks "$server")
    wrote1=$(written_bytes "$server")
    read -r rps count p99 <<< "$figures"
    cpu=$(echo "scale=4; ($after - $before) * 1000 / $(getconf CLK_TCK) / $count" | bc)
    case $name in c | r) written=$(( (wrote1 - wrote0) / count )) ;; esac
    printf '%s\t%s\t%s\t%s\t%s\n' "${label%% *}" "$name" "$rps" "$cpu" "${written:-0}" >> "$OUT/figures.tsv"
    line+=" $rps, $cpu ms${written:+, $((written / 1024)) KB written}${p99:+, p99 $p99} |"
  done
  kill "$server"; wait "$server" 2>/dev/null || true
  echo "$line"
}

# bare: the bare axum handler's req/s, for the medians' shares of it.
bare() {
  "$BARE" 127.0.0.1:$((PORT + 1)) &
  local server=$! rps
  wait_healthy_bare $((PORT + 1))
  rps=$(wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" "http://127.0.0.1:$((PORT + 1))/" | awk '/Requests\/sec/ {print $2}')
  kill "$server"; wait "$server" 2>/dev/null || true
  printf 'bare\tbare\t%s\t0\t0\n' "$rps" >> "$OUT/figures.tsv"
  echo "| bare axum handler | $rps |"
}
wait_healthy_bare() {
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$1/" >/dev/null && return 0; sleep 0.1; done
  return 1
}

# cpu_ticks PID: the process's user and system time so far, in clock ticks.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# written_bytes PID: the bytes the process has written so far (write calls).
written_bytes() { awk '$1=="wchar:" {print $2}' "/proc/$1/io"; }

declare -A HEADINGS=([c]="(c) PATCH" [s]="(s) page by slug (getPage)" [r]="(r) PATCH a random post" [a]="(a) GET by id" [d]="(d) delivery page" [n]="(n) delivery menu"
  [b1]="(b1) REST list, 20 posts" [b2]="(b2) delivery list, 20 posts")
: > "$OUT/figures.tsv"
{
  heading="| binary |" rule="| --- |"
  for name in $SCENARIOS; do heading+=" ${HEADINGS[$name]} req/s, CPU/req |"; rule+=" --- |"; done
  echo "$heading"
  echo "$rule"
  for round in $(seq 1 "$ROUNDS"); do
    [ -n "${BARE:-}" ] && bare
    one "A round $round" "$A" "$DATA-a"
    one "B round $round" "$B" "$DATA-b" "${B_WEBHOOK:-0}"
  done
  echo
  python3 - "$OUT/figures.tsv" <<'PY'
import statistics, sys
rows = [line.split("\t") for line in open(sys.argv[1]).read().splitlines() if line]
bare = [float(r[2]) for r in rows if r[0] == "bare"]
bare = statistics.median(bare) if bare else None
if bare:
    print(f"(bare) median {bare:,.0f} req/s")
for name in dict.fromkeys(r[1] for r in rows if r[0] != "bare"):
    med = {side: [statistics.median(float(r[i]) for r in rows if r[0] == side and r[1] == name) for i in (2, 3, 4)]
           for side in ("A", "B")}
    (ra, ca, wa), (rb, cb, wb) = med["A"], med["B"]
    written = f"; written/req A {wa / 1024:.1f} KB, B {wb / 1024:.1f} KB" if wa else ""
    share = f"; of the bare handler A {ra / bare:.1%}, B {rb / bare:.1%}" if bare else ""
    print(f"({name}) median A {ra:,.0f} req/s, {ca:.3f} ms CPU/req; B {rb:,.0f} req/s, {cb:.3f} ms CPU/req; B/A {rb / ra:.2f}x{written}{share}")
PY
  echo
  echo "A: $A  B: $B  machine: $(nproc) cores; wrk -t2 -c$CONNECTIONS -d${DURATION}s on loopback"
} | tee "$OUT/summary.md"
