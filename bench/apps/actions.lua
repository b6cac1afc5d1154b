-- wrk script: POST /v1/apps/counter/actions with an `inc` action, over SESSIONS sessions
-- (default 64) round robin across wrk's threads; DRY=1 sends dry runs (docs/bench.md).
-- OFFSET shifts the sessions (two wrk processes, OFFSET=0 and 1, on two replicas: each its own).
local sessions = tonumber(os.getenv("SESSIONS") or "64")
local offset = tonumber(os.getenv("OFFSET") or "0")
local dry = os.getenv("DRY") == "1"
local n = 0
thread_id = 0
local counter = 0
function setup(thread)
  thread:set("thread_id", counter)
  counter = counter + 1
end
request = function()
  n = n + 1
  local session = "s" .. ((n * 2 + thread_id + offset) % sessions)
  local body = '{"action":"inc","session_id":"' .. session .. '"' .. (dry and ',"dry_run":true' or '') .. '}'
  return wrk.format("POST", "/v1/apps/counter/actions", {["content-type"] = "application/json"}, body)
end
