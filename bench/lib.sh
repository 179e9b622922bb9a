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
