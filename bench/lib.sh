# Shared by the bench scripts (sourced, not run).

# write_patch_lua FILE TOKEN: a wrk script that PATCHes a title, numbered per request.
write_patch_lua() {
  cat > "$1" <<LUA
wrk.method = "PATCH"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer $2"
counter = 0
request = function()
  counter = counter + 1
  return wrk.format(nil, nil, nil, '{"title":"Benchmark title ' .. counter .. '"}')
end
LUA
}

# first_id URL TOKEN: the id of the first item a list answers.
first_id() {
  curl -sf -H "Authorization: Bearer $2" "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["items"][0]["id"])'
}

# wait_healthy PORT: waits (up to 10 s) until the server answers /healthz.
wait_healthy() {
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$1/healthz" >/dev/null && return 0; sleep 0.1; done
  return 1
}

# all_ids URL TOKEN: every id a paged list answers, one a line.
all_ids() {
  python3 - "$1" "$2" <<'PY'
import json, sys, urllib.request
url, token = sys.argv[1], sys.argv[2]
cursor = None
while True:
    page = url + "?limit=100" + (f"&cursor={cursor}" if cursor else "")
    req = urllib.request.Request(page, headers={"Authorization": f"Bearer {token}"})
    body = json.load(urllib.request.urlopen(req))
    for item in body["items"]:
        print(item["id"])
    cursor = body.get("nextCursor")
    if not cursor:
        break
PY
}

# write_random_patch_lua FILE TOKEN IDS [SALT]: a wrk script that PATCHes the
# title of a random entry among the ids in the file IDS (one a line). Two
# wrk processes at once need different SALTs, or they pick the same entries.
write_random_patch_lua() {
  {
    echo "math.randomseed(${4:-0})"
    echo 'wrk.method = "PATCH"'
    echo 'wrk.headers["Content-Type"] = "application/json"'
    echo "wrk.headers[\"Authorization\"] = \"Bearer $2\""
    echo 'ids = {'
    sed 's/.*/"&",/' "$3"
    echo '}'
    cat <<'LUA'
counter = 0
setup = function(thread) thread:set("seed", math.random(1, 1000000)) end
init = function() math.randomseed(seed or os.time()) end
request = function()
  counter = counter + 1
  local id = ids[math.random(#ids)]
  return wrk.format(nil, "/api/v1/entries/" .. id, nil, '{"title":"Random title ' .. counter .. '"}')
end
LUA
  } > "$1"
}
