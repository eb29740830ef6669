#!/usr/bin/env bash
# The Debian packages whose programs the tests run for real: prometheus (the server and
# promtool), systemd (systemd-analyze), redis-server and redis-tools (the shared cache tier, its
# Cluster, and redis-benchmark, which the shared-tier bench reads), chromium (the load report is
# opened in it headless) and openssl (certificates for the TLS listener's tests). Run by `npm test`.
exec bash "$(dirname "$0")/../../ops/need-debian-packages.sh" "the tests" \
  promtool=prometheus prometheus=prometheus systemd-analyze=systemd \
  redis-server=redis-server redis-cli=redis-tools redis-benchmark=redis-tools chromium=chromium openssl=openssl
