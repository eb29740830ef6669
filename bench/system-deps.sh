#!/usr/bin/env bash
# The Debian packages `npm run bench` drives: wrk (the load generator), nginx (the peer),
# util-linux's taskset (pinning), redis-server (the shared tier of the fleet scenarios),
# redis-benchmark (the bare Redis round trip that scenario is read against), h2load from
# nghttp2-client (the HTTP/2 load generator), openssl (the HTTP/2 scenario's certificate) and valgrind
# (callgrind, which counts the instructions of `--instructions`).
exec bash "$(dirname "$0")/../ops/need-debian-packages.sh" "the bench" \
  wrk=wrk nginx=nginx taskset=util-linux redis-server=redis-server redis-cli=redis-tools redis-benchmark=redis-tools h2load=nghttp2-client openssl=openssl valgrind=valgrind callgrind_control=valgrind
