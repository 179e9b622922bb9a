#!/usr/bin/env bash
# Delivery in a locale against the default, side by side on one server: the
# 1,000-page bench site with bench-page-0 translated into German and
# published; ROUNDS alternating rounds of wrk against the page without a
# locale, the page in German (?locale=de), the header menu without a locale
# and in German, DURATION seconds each.
#
# Usage: bench/locales.sh [BIN]   (a release binary; default target/release/quire,
#                                  ROUNDS=3 DURATION=8 CONNECTIONS=32)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
BIN=${1:-target/release/quire}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-8}
CONNECTIONS=${CONNECTIONS:-32}
PORT=${PORT:-18283}
OUT=bench/results/locales
DATA=$OUT/data
TOKEN=bench-token-0123456789abcdef
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk; } >/dev/null 2>&1
mkdir -p "$OUT"
rm -rf "$DATA"
QUIRE_LOG=warn "$BIN" seed --data "$DATA" --bench-pages 1000 --bench-posts 1000 >/dev/null
QUIRE_LOG=warn QUIRE_BOOTSTRAP_TOKEN=$TOKEN "$BIN" serve --addr 127.0.0.1:$PORT --data "$DATA" >/dev/null 2>"$OUT/server.log" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
wait_healthy "$PORT"
B=http://127.0.0.1:$PORT
AUTH="Authorization: Bearer $TOKEN"
PAGE=$(curl -sf "$B/api/v1/delivery/pages/bench-page-0" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
curl -sf -X PUT -H "$AUTH" -H 'content-type: application/json' \
  -d '{"fields":{"name":"Testseite 0","slug":"testseite-0","meta":{"title":"Testseite"}},"publish":true}' \
  "$B/api/v1/pages/$PAGE/translations/de" >/dev/null
curl -sf "$B/api/v1/delivery/pages/bench-page-0?locale=de" | grep -q Testseite || { echo "the German page is not delivered" >&2; exit 1; }
rate() { wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" "$1" | awk '/Requests\/sec/ {print $2}'; }
echo "| round | page | page ?locale=de | menu | menu ?locale=de |"
echo "| --- | --- | --- | --- | --- |"
for r in $(seq 1 "$ROUNDS"); do
  printf '| %s | %s | %s | %s | %s |\n' "$r" "$(rate "$B/api/v1/delivery/pages/bench-page-0")" \
    "$(rate "$B/api/v1/delivery/pages/bench-page-0?locale=de")" "$(rate "$B/api/v1/delivery/navigations/header")" \
    "$(rate "$B/api/v1/delivery/navigations/header?locale=de")"
done
