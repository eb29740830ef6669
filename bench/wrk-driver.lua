-- wrk script for `npm run bench` (bench/wrk.ts). Environment:
--   BENCH_AUTH      an Authorization value sent on every request
--   BENCH_ACCEPT_ENCODING  an Accept-Encoding value sent on every request (absent: none, identity)
--   BENCH_TARGETS   a file of request targets, one per line (absent: wrk's own URL, one request)
--   BENCH_ORDER     a file of 1-based indexes into the targets, one per line: the order in which
--                   they are asked (a Zipf sequence); absent: the targets in turn
-- Every request is formatted once, at start, so the generator spends its time on the wire.
-- `done` prints one line, BENCH_RESULT {json}, that the bench parses.
local auth = os.getenv("BENCH_AUTH")
if auth ~= nil then wrk.headers["Authorization"] = auth end
local accept_encoding = os.getenv("BENCH_ACCEPT_ENCODING")
if accept_encoding ~= nil then wrk.headers["Accept-Encoding"] = accept_encoding end

local requests = {}
local order = {}
local next_index = 0

-- wrk sets the Host header just before it calls init, so requests are formatted here.
init = function(_)
  local targets = os.getenv("BENCH_TARGETS")
  if targets == nil then return end
  for line in io.lines(targets) do
    if line ~= "" then requests[#requests + 1] = wrk.format("GET", line) end
  end
  local order_file = os.getenv("BENCH_ORDER")
  if order_file ~= nil then
    for line in io.lines(order_file) do
      if line ~= "" then order[#order + 1] = tonumber(line) end
    end
  else
    for i = 1, #requests do order[i] = i end
  end
end

-- Defined only with targets: without a `request` function wrk sends its one prebuilt request
-- with no Lua call at all, the cheapest generator there is for the hot URL.
if os.getenv("BENCH_TARGETS") ~= nil then
  request = function()
    next_index = next_index % #order + 1
    return requests[order[next_index]]
  end
end

done = function(summary, latency, _)
  local e = summary.errors
  io.write(string.format(
    'BENCH_RESULT {"requests":%d,"durationUs":%d,"bytes":%d,"connectErrors":%d,"readErrors":%d,"writeErrors":%d,"non2xx":%d,"timeouts":%d,"p50Us":%d,"p90Us":%d,"p99Us":%d,"maxUs":%d,"meanUs":%.1f}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end
