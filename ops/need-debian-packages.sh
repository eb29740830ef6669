#!/usr/bin/env bash
# Installs the Debian packages whose programs are missing, and nothing when all are there.
# Usage: need-debian-packages.sh PURPOSE COMMAND=PACKAGE...
#   e.g. need-debian-packages.sh "the local fleet" redis-server=redis-server redis-cli=redis-tools
set -euo pipefail
purpose="$1"
shift
need=()
for pair in "$@"; do
  command -v "${pair%%=*}" >/dev/null 2>&1 || need+=("${pair#*=}")
done
[ ${#need[@]} -eq 0 ] && exit 0
mapfile -t need < <(printf '%s\n' "${need[@]}" | sort -u)
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "installing Debian packages for ${purpose}: ${need[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
