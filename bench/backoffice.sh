#!/usr/bin/env bash
# Back-office screens on the seeded 1,000-page site: wrk -c8 against the
# dashboard, the page tree, a page editor, a page's German translation side
# by side, a section form, the posts list, a post, the media grid, a menu,
# the history, search, people, releases and approvals (signed in as the
# admin), and the size of the script and stylesheet the back-office ships,
# gzipped.
#
# Usage: bench/backoffice.sh     (DURATION=20 CONNECTIONS=8 THREADS=2 by default;
#                                 BIN=path/to/quire to use a release binary built elsewhere;
#                                 BENCH_PAGES=0 for the seeded demo alone, and CONNECTIONS=1
#                                 THREADS=1 for one request at a time, as a person loads a screen)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
DURATION=${DURATION:-20}
CONNECTIONS=${CONNECTIONS:-8}
THREADS=${THREADS:-2}
PORT=${PORT:-18182}
OUT=bench/results/backoffice
DATA=$OUT/data
TOKEN=bench-token-0123456789abcdef
PASSWORD="bench password 123"

if ! command -v wrk >/dev/null; then
  (apt-get update -qq && apt-get install -y -qq wrk) >/dev/null
fi
if [ -z "${BIN:-}" ]; then
  cargo build --release -q
  BIN=target/release/quire
fi
mkdir -p "$OUT"
rm -rf "$DATA"
BENCH_PAGES=${BENCH_PAGES:-1000}
if [ "$BENCH_PAGES" = 0 ]; then
  QUIRE_LOG=warn $BIN seed --data "$DATA" >/dev/null
else
  QUIRE_LOG=warn $BIN seed --data "$DATA" --bench-pages "$BENCH_PAGES" --bench-posts 200 >/dev/null
fi
echo "$PASSWORD" | QUIRE_LOG=warn $BIN user create --email bench@example.org --group admin --password-stdin --data "$DATA" >/dev/null
QUIRE_LOG=warn QUIRE_BOOTSTRAP_TOKEN=$TOKEN $BIN serve --addr 127.0.0.1:$PORT --data "$DATA" >/dev/null 2>"$OUT/server.log" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
wait_healthy "$PORT"
B=http://127.0.0.1:$PORT
COOKIE=$(curl -s -o /dev/null -D - --data-urlencode "email=bench@example.org" --data-urlencode "password=$PASSWORD" "$B/sign-in" \
  | awk -F'[=;]' 'tolower($1) ~ /^set-cookie: quire_session/ {print $2}')
PAGE_ID=$(first_id "$B/api/v1/pages?limit=1&status=published" "$TOKEN")
SECTION_ID=$(first_id "$B/api/v1/pages/$PAGE_ID/sections?limit=1" "$TOKEN")
POST_ID=$(first_id "$B/api/v1/collections/blog/entries?limit=1" "$TOKEN")
MENU_ID=$(first_id "$B/api/v1/navigations?limit=1" "$TOKEN")

echo "| screen | req/s | p50 | p99 |"
echo "| --- | --- | --- | --- |"
for screen in "dashboard /" "tree /pages" "editor /pages/$PAGE_ID" "translation /pages/$PAGE_ID/translations/de" \
  "section /sections/$SECTION_ID" "children /pages?parent=$PAGE_ID" "posts /collections/blog" "post /entries/$POST_ID" \
  "media /media" "menu /navigation/$MENU_ID" "history /history" "search /search?q=bench" "people /users" \
  "releases /releases" "approvals /approvals"; do
  name=${screen%% *}
  path=${screen#* }
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency -H "Cookie: quire_session=$COOKIE" "$B$path" > "$OUT/$name.txt"
  if grep -q "Non-2xx" "$OUT/$name.txt"; then echo "$name answered errors" >&2; exit 1; fi
  printf '| %s | %s | %s | %s |\n' "$name" "$(awk '/Requests\/sec/ {print $2}' "$OUT/$name.txt")" \
    "$(awk '$1=="50%" {print $2}' "$OUT/$name.txt")" "$(awk '$1=="99%" {print $2}' "$OUT/$name.txt")"
done
js=$(curl -s "$B/assets/app.js" | gzip -9 | wc -c)
css=$(curl -s "$B/assets/app.css" | gzip -9 | wc -c)
echo "shipped (gzip -9): app.js $js B + app.css $css B = $((js + css)) B"
