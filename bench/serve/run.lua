-- wrk script: POST /v1/run with the body in the file named by BODY (bench/serve/README.md).
local path = os.getenv("BODY")
local f = assert(io.open(path, "r"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"

done = function(summary, latency, requests)
  io.write(string.format("p50 %.0f us, p99 %.0f us, non-2xx %d\n",
    latency:percentile(50), latency:percentile(99), summary.errors.status))
end
