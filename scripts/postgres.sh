# A throwaway PostgreSQL 15 cluster, for the test script and the benchmarks
# (sourced, not run): Debian's postgresql-15 (installed when missing), the
# pgvector extension built from the vendored source when it is not
# installed yet, and a cluster in a temporary folder on a free port,
# stopped and removed when the sourcing script exits.
#
#   start_postgres [SETTING=VALUE ...]   sets PG_URL (postgres://quire@127.0.0.1:PORT/postgres)
#                                        and PGVECTOR (yes or no)

PG_BIN=/usr/lib/postgresql/15/bin
PGVECTOR_CONTROL=/usr/share/postgresql/15/extension/vector.control

install_postgres() {
  if [ ! -x "$PG_BIN/initdb" ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql-15 >/dev/null
  fi
  # pgvector 0.8.6 from the vendored source (no Debian package ships it),
  # built against Debian's server headers.
  local tarball="${QUIRE_VENDOR_DIR:-../shared/vendor}/pgvector-0.8.6.tar.gz"
  if [ ! -f "$PGVECTOR_CONTROL" ] && [ -f "$tarball" ]; then
    if [ ! -f /usr/include/postgresql/15/server/postgres.h ]; then
      apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
          postgresql-server-dev-15 build-essential >/dev/null
    fi
    local build
    build="$(mktemp -d)"
    tar xzf "$tarball" -C "$build"
    make -s -C "$build/pgvector-0.8.6" PG_CONFIG="$PG_BIN/pg_config" OPTFLAGS="" >/dev/null
    make -s -C "$build/pgvector-0.8.6" install PG_CONFIG="$PG_BIN/pg_config" >/dev/null
    rm -rf "$build"
  fi
  if [ -f "$PGVECTOR_CONTROL" ]; then PGVECTOR=yes; else PGVECTOR=no; fi
}

start_postgres() {
  install_postgres
  PG_DIR="$(mktemp -d)"
  local port settings=()
  port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  as_pg=()
  if [ "$(id -u)" = 0 ]; then
    chown postgres "$PG_DIR"
    as_pg=(runuser -u postgres --)
  fi
  for s in "$@"; do settings+=(-c "$s"); done
  # A linguistic collation (ICU's en-US), as most databases have, rather
  # than C, whose byte order is SQLite's: the suites run where text sorts
  # and compares differently from SQLite.
  "${as_pg[@]}" "$PG_BIN/initdb" -D "$PG_DIR/data" -U quire --auth=trust -E UTF8 --locale=C.UTF-8 \
      --locale-provider=icu --icu-locale=en-US >/dev/null
  trap stop_postgres EXIT
  "${as_pg[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/log" -w \
      -o "-p $port -k $PG_DIR -c listen_addresses=127.0.0.1 ${settings[*]}" start >/dev/null
  PG_URL="postgres://quire@127.0.0.1:$port/postgres"
}

stop_postgres() {
  "${as_pg[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$PG_DIR"
}
