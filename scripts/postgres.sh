# shellcheck shell=bash
# A throwaway PostgreSQL cluster, for the test script and the benchmarks
# (sourced, not run): the newest PostgreSQL 15 or later installed from
# Debian's packages (else the distribution's own, `postgresql`: 15 on
# Debian 12, 17 on Debian 13), the pgvector extension built from the
# vendored source when it is not installed yet, and a cluster in a
# temporary folder on a free port, stopped and removed when the sourcing
# script exits (by its own exit trap, when it has one). Installing needs
# root or sudo; the cluster runs as the `postgres` user when the script
# runs as root, as the user otherwise.
#
#   start_postgres [SETTING=VALUE ...]   sets PG_URL (postgres://quire@127.0.0.1:PORT/postgres),
#                                        PG_VERSION (its major version) and PGVECTOR (yes or no)
# shellcheck disable=SC2034  # PG_URL, PGVECTOR and the rest: for the sourcing script

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# The newest major version of 15 or later with a server installed.
installed_postgres() {
  local dir v best=
  for dir in /usr/lib/postgresql/*/bin; do
    [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ] || continue
    v="${dir#/usr/lib/postgresql/}"
    v="${v%/bin}"
    [[ "$v" =~ ^[0-9]+$ ]] && [ "$v" -ge 15 ] || continue
    if [ -z "$best" ] || [ "$v" -gt "$best" ]; then best="$v"; fi
  done
  [ -n "$best" ] && echo "$best"
}

install_postgres() {
  if ! PG_VERSION="$(installed_postgres)"; then
    apt_install postgresql
    if ! PG_VERSION="$(installed_postgres)"; then
      echo "no PostgreSQL 15 or later: this distribution's postgresql package is older" >&2
      return 1
    fi
  fi
  PG_BIN="/usr/lib/postgresql/$PG_VERSION/bin"
  # pgvector 0.8.6 from the vendored source (Debian 12 ships no package of
  # it), built against Debian's server headers as the user, installed as
  # root.
  local control="/usr/share/postgresql/$PG_VERSION/extension/vector.control"
  local tarball="${QUIRE_VENDOR_DIR:-../shared/vendor}/pgvector-0.8.6.tar.gz"
  if [ ! -f "$control" ] && [ -f "$tarball" ]; then
    apt_install "postgresql-server-dev-$PG_VERSION" build-essential
    local build
    build="$(mktemp -d)"
    tar xzf "$tarball" -C "$build"
    make -s -C "$build/pgvector-0.8.6" PG_CONFIG="$PG_BIN/pg_config" OPTFLAGS="" >/dev/null
    as_root make -s -C "$build/pgvector-0.8.6" install PG_CONFIG="$PG_BIN/pg_config" >/dev/null
    rm -rf "$build"
  fi
  if [ -f "$control" ]; then PGVECTOR=yes; else PGVECTOR=no; fi
}

start_postgres() {
  install_postgres
  PG_DIR="$(mktemp -d)"
  local port settings=()
  port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  # PostgreSQL refuses to run as root.
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
  # Stopped when the script exits, unless it has an exit trap of its own
  # (which then calls stop_postgres).
  [ -n "$(trap -p EXIT)" ] || trap stop_postgres EXIT
  "${as_pg[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/log" -w \
      -o "-p $port -k $PG_DIR -c listen_addresses=127.0.0.1 ${settings[*]}" start >/dev/null
  PG_URL="postgres://quire@127.0.0.1:$port/postgres"
}

# Stops the cluster and removes its folder (nothing when none was started).
stop_postgres() {
  [ -n "${PG_DIR:-}" ] || return 0
  "${as_pg[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$PG_DIR"
  PG_DIR=
}
