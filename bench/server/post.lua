-- wrk script: POSTs the JSON body in $KILN_BODY to the URL given to wrk, counts non-200 answers
-- as errors and prints throughput and latency percentiles in one line.
local f = assert(io.open(os.getenv("KILN_BODY"), "rb"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"

local bad = 0
response = function(status, headers, body)
  if status ~= 200 then bad = bad + 1 end
end

done = function(summary, latency, requests)
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write +
                 summary.errors.status + summary.errors.timeout
  io.write(string.format("RESULT requests=%d seconds=%.1f rps=%.1f p50_ms=%.3f p99_ms=%.3f errors=%d\n",
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, errors))
end
