# shellcheck shell=bash
# Helpers of scripts/test and scripts/postgres.sh (sourced, not run): how
# they install what a check needs. Debian packages go through apt-get, run
# directly as root and through sudo otherwise; Python packages go into a
# virtualenv under target/venv/, never into the system's Python (which
# Debian 12 and later refuse, PEP 668).

# Runs a command as root: directly when root, with sudo otherwise.
as_root() {
  if [ "$(id -u)" = 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    echo "needs root to run: $*" >&2
    echo "run as root, install sudo, or install what it needs beforehand (README, The two commands)" >&2
    return 1
  fi
}

# apt_install PACKAGE...: installs these Debian packages (those not
# installed yet), with one `apt-get update` per run.
APT_UPDATED=
apt_install() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q ' installed$' || missing+=("$p")
  done
  [ ${#missing[@]} -gt 0 ] || return 0
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "missing: ${missing[*]} (Debian package names); install them and run again" >&2
    return 1
  fi
  echo "installing Debian packages: ${missing[*]}" >&2
  if [ -z "$APT_UPDATED" ]; then
    as_root apt-get update -qq
    APT_UPDATED=yes
  fi
  as_root env DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# python_venv NAME REQUIREMENT...: the virtualenv target/venv/NAME, made
# with the system's python3 when missing, with these pinned requirements
# installed (a no-op when they already are). Prints its python's path.
python_venv() {
  local dir="$PWD/target/venv/$1"
  shift
  if [ ! -x "$dir/bin/python" ]; then
    rm -rf "$dir"
    python3 -m venv "$dir" >&2 || return 1
  fi
  "$dir/bin/python" -m pip install --quiet --disable-pip-version-check "$@" >&2 || return 1
  echo "$dir/bin/python"
}
