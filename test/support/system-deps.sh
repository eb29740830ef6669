#!/usr/bin/env bash
# Installs the Debian packages whose programs the tests run for real, when they are missing:
# prometheus (the prometheus server and promtool), systemd (systemd-analyze), redis-server and
# redis-tools (the shared cache tier and its Cluster) and chromium (the
# load report is opened in it headless). Run by `npm test` before the tests.
set -euo pipefail
need=()
command -v promtool >/dev/null 2>&1 || need+=(prometheus)
command -v prometheus >/dev/null 2>&1 || need+=(prometheus)
command -v systemd-analyze >/dev/null 2>&1 || need+=(systemd)
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v redis-cli >/dev/null 2>&1 || need+=(redis-tools)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
[ ${#need[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "installing Debian packages for the tests: ${need[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
