#!/usr/bin/env bash
# HTTP benchmark of a release build on PostgreSQL: one `quire serve`, then
# two replicas on the same database, on loopback.
#
# Starts a throwaway PostgreSQL 15 cluster (scripts/postgres.sh), seeds
# 1,000 pages and 10,000 posts into it, and drives the server with wrk at
# 32 connections for $DURATION seconds per scenario (the reads and the
# random PATCH of bench/run.sh, and the bare axum handler as the ceiling).
# With two replicas the same load is split between them: two wrk processes
# of 16 connections each, run at once; their req/s are added and the worse
# p99 is reported.
#
# REPLICA_CPU=0.4 gives each replica that share of one core (a cgroup CPU
# quota, as a container's limit does), standing in for replicas on
# machines of their own: on one small machine the replicas, PostgreSQL and
# wrk otherwise share the same cores, and a second replica adds no CPU.
# PostgreSQL and wrk stay unlimited. Needs root and the cgroup cpu
# controller.
#
# Usage: bench/postgres.sh        (DURATION=20 CONNECTIONS=32 THREADS=2 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
# shellcheck source=scripts/postgres.sh
. scripts/postgres.sh
DURATION=${DURATION:-20}
CONNECTIONS=${CONNECTIONS:-32}
THREADS=${THREADS:-2}
PORT=${PORT:-18281}
OUT=bench/results/postgres
TOKEN=bench-token-0123456789abcdef
REPLICA_CPU=${REPLICA_CPU:-}
CGROUPS=()

if ! command -v wrk >/dev/null; then
  (apt-get update -qq && apt-get install -y -qq wrk) >/dev/null 2>&1
fi
cargo build --release -q --workspace --bin quire --example bare_axum
BIN=target/release/quire
BARE=target/release/examples/bare_axum
mkdir -p "$OUT"
rm -rf "$OUT/data" "$OUT"/*.txt "$OUT/server.log"
LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
start_postgres max_connections=200 shared_buffers=512MB synchronous_commit=on
export QUIRE_DATABASE_URL="$PG_URL"
echo "seeding 1,000 pages and 10,000 posts into PostgreSQL" >&2
SEED_T0=$(date +%s.%N)
QUIRE_LOG=warn $BIN seed --data "$OUT/data" --bench-pages 1000 --bench-posts 10000 >/dev/null
SEED_S=$(echo "$(date +%s.%N) - $SEED_T0" | bc)

PIDS=()
limit_cpu() { # pid, name: at most $REPLICA_CPU of a core for the process
  [ -n "$REPLICA_CPU" ] || return 0
  local quota group
  quota=$(awk -v f="$REPLICA_CPU" 'BEGIN { printf "%d", f * 100000 }')
  if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
    group=/sys/fs/cgroup/quire-bench-$2
    mkdir -p "$group"
    echo "$quota 100000" > "$group/cpu.max"
  else
    group=/sys/fs/cgroup/cpu/quire-bench-$2
    mkdir -p "$group"
    echo 100000 > "$group/cpu.cfs_period_us"
    echo "$quota" > "$group/cpu.cfs_quota_us"
  fi
  echo "$1" > "$group/cgroup.procs"
  CGROUPS+=("$group")
}
start_replica() { # port
  QUIRE_LOG=warn QUIRE_BOOTSTRAP_TOKEN=$TOKEN $BIN serve --no-seed --addr "127.0.0.1:$1" --data "$OUT/data" \
      >/dev/null 2>>"$OUT/server.log" &
  PIDS+=($!)
  limit_cpu "$!" "$1"
}
cleanup() {
  kill "${PIDS[@]}" 2>/dev/null || true
  wait "${PIDS[@]}" 2>/dev/null || true
  for group in "${CGROUPS[@]}"; do rmdir "$group" 2>/dev/null || true; done
  stop_postgres
}
BARE_PORT=$((PORT + 9))
$BARE 127.0.0.1:$BARE_PORT &
PIDS+=($!)
trap cleanup EXIT
A=$PORT
B=$((PORT + 2))
start_replica "$A"
wait_healthy "$A"
start_replica "$B"
wait_healthy "$B"
sleep 1

POST_ID=$(first_id "http://127.0.0.1:$A/api/v1/collections/blog/entries?limit=1" "$TOKEN")
all_ids "http://127.0.0.1:$A/api/v1/collections/blog/entries" "$TOKEN" > "$OUT/post-ids.txt"
write_random_patch_lua "$OUT/patch-random.lua" "$TOKEN" "$OUT/post-ids.txt" 1
write_random_patch_lua "$OUT/patch-random-b.lua" "$TOKEN" "$OUT/post-ids.txt" 2
cat > "$OUT/page-by-slug.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer $TOKEN"
wrk.body = '{"slug":"bench-page-0"}'
LUA

# path, extra wrk args... : the scenario's path and options on any replica
declare -A SCENARIO=(
  [a2-page-by-slug]="/api/v1/tools/getPage/invoke|-s $OUT/page-by-slug.lua"
  [a3-delivery-page]="/api/v1/delivery/pages/bench-page-0|"
  [b2-published-posts-with-bodies]="/api/v1/delivery/collections/blog/entries?limit=20|"
  [c2-patch-random-post]="/api/v1/entries/$POST_ID|-s $OUT/patch-random.lua"
)
ORDER=(a2-page-by-slug a3-delivery-page b2-published-posts-with-bodies c2-patch-random-post)

stat_of() { # file, what: rps | p50 | p99 | errors
  case $2 in
    rps) awk '/Requests\/sec/ {print $2}' "$1" ;;
    p50) awk '$1=="50%" {print $2}' "$1" ;;
    p99) awk '$1=="99%" {print $2}' "$1" ;;
    errors) awk '/Non-2xx/ {n = $5} END {print n + 0}' "$1" ;;
  esac
}
ms() { # a wrk latency (850.00us, 1.20ms, 2.00s) in milliseconds
  echo "$1" | awk '/us$/ {sub("us",""); print $1/1000; next} /ms$/ {sub("ms",""); print $1; next} /s$/ {sub("s",""); print $1*1000}'
}
one() { # name, port, connections, output
  local path opts
  IFS='|' read -r path opts <<< "${SCENARIO[$1]}"
  # The second replica's writer picks its own random posts.
  [ "$2" = "$B" ] && opts=${opts/patch-random.lua/patch-random-b.lua}
  # shellcheck disable=SC2086
  wrk -t"$THREADS" -c"$3" -d"${DURATION}s" --latency $opts "http://127.0.0.1:$2$path" > "$4"
}

exec > >(tee "$OUT/summary.md")
echo "| scenario | replicas | req/s | p50 | p99 | non-2xx |"
echo "| --- | --- | --- | --- | --- | --- |"
wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency "http://127.0.0.1:$BARE_PORT/" > "$OUT/0-bare-axum.txt"
f=$OUT/0-bare-axum.txt
printf '| 0-bare-axum | - | %s | %s | %s | 0 |\n' "$(stat_of "$f" rps)" "$(stat_of "$f" p50)" "$(stat_of "$f" p99)"
for name in "${ORDER[@]}"; do
  one "$name" "$A" "$CONNECTIONS" "$OUT/$name-1.txt"
  f=$OUT/$name-1.txt
  printf '| %s | 1 | %s | %s | %s | %s |\n' "$name" "$(stat_of "$f" rps)" "$(stat_of "$f" p50)" "$(stat_of "$f" p99)" "$(stat_of "$f" errors)"
  one "$name" "$A" $((CONNECTIONS / 2)) "$OUT/$name-2a.txt" &
  first=$!
  one "$name" "$B" $((CONNECTIONS / 2)) "$OUT/$name-2b.txt"
  wait "$first"
  fa=$OUT/$name-2a.txt
  fb=$OUT/$name-2b.txt
  rps=$(echo "$(stat_of "$fa" rps) + $(stat_of "$fb" rps)" | bc)
  p99a=$(ms "$(stat_of "$fa" p99)")
  p99b=$(ms "$(stat_of "$fb" p99)")
  p99=$(echo "$p99a $p99b" | awk '{print ($1 > $2 ? $1 : $2) "ms"}')
  errors=$(( $(stat_of "$fa" errors) + $(stat_of "$fb" errors) ))
  printf '| %s | 2 | %s | %s / %s | %s | %s |\n' "$name" "$rps" "$(stat_of "$fa" p50)" "$(stat_of "$fb" p50)" "$p99" "$errors"
done
echo
echo "seeding 1,000 pages and 10,000 posts took $SEED_S s"
echo "database size after the run: $(psql -At "$PG_URL" -c "SELECT pg_size_pretty(pg_database_size('postgres'))")"
echo "load average before the run: $LOAD"
echo "machine: $(nproc) cores, $(uname -sr); PostgreSQL 15 on the same machine; wrk -t$THREADS on loopback"
[ -z "$REPLICA_CPU" ] || echo "each replica limited to $REPLICA_CPU of a core (cgroup CPU quota); PostgreSQL and wrk unlimited"
