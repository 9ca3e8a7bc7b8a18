-- wrk script: GET each request path of a file in turn, with an API key.
--   wrk -s queries.lua URL -- PATHS_FILE API_KEY
-- PATHS_FILE holds one path+query per line (already percent-encoded), e.g.
--   /v1/address?country=NLD&q=damrak%201&limit=5
-- At the end it prints one JSON line (prefixed "RESULT ") that run.py reads.

local threads = {}

function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end

local paths = {}
local next_path = 0

function init(args)
  for line in io.lines(args[1]) do
    paths[#paths + 1] = line
  end
  if #paths == 0 then
    error("no request paths in " .. args[1])
  end
  if args[2] and args[2] ~= "" then
    wrk.headers["Authorization"] = "Bearer " .. args[2]
  end
  -- threads start at different places of the list, so they do not ask the same thing in step
  next_path = (id * 7919) % #paths
end

function request()
  next_path = next_path % #paths + 1
  return wrk.format("GET", paths[next_path])
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'RESULT {"requests":%d,"duration_us":%d,"bytes":%d,"non_2xx":%d,'
      .. '"connect_errors":%d,"read_errors":%d,"write_errors":%d,"timeouts":%d,'
      .. '"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d}\n',
    summary.requests, summary.duration, summary.bytes, e.status,
    e.connect, e.read, e.write, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
