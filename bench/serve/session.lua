-- wrk script: session create -> run -> stop cycles. Each thread keeps one connection (run with
-- -c equal to -t), so its requests follow one another.
local state, id = 0, nil
local json = { ["Content-Type"] = "application/json" }

request = function()
  if state == 0 then
    return wrk.format("POST", "/v1/sessions", json, '{"policy":"default"}')
  elseif state == 1 then
    return wrk.format("POST", "/v1/sessions/" .. id .. "/run", json,
      '{"source":"export default (x) => x","input":{"a":1}}')
  else
    return wrk.format("DELETE", "/v1/sessions/" .. id)
  end
end

response = function(status, headers, body)
  if state == 0 then
    id = body:match('"session_id":"(%x+)"')
    state = id and 1 or 0
  elseif state == 1 then
    state = 2
  else
    state = 0
  end
end

done = function(summary, latency, requests)
  io.write(string.format("p50 %.0f us, p99 %.0f us, non-2xx %d\n",
    latency:percentile(50), latency:percentile(99), summary.errors.status))
end
