-- wrk script: POSTs one JSON body to the URL's path (wrk reports replies other than 2xx/3xx itself).
--   wrk -t1 -c8 -d3s -s tests/peers/post.lua http://127.0.0.1:PORT/rpcscope.bench.v1.Bench/Sum
-- The body is {"nums": [1, 2, 3]} unless BODY is set (non-empty) in the environment, e.g.
--   BODY='{"payload": "aGVsbG8="}' wrk -t1 -c8 -d3s -s tests/peers/post.lua \
--       http://127.0.0.1:PORT/rpcscope.bench.v1.Bench/Echo
wrk.method = "POST"
local body = os.getenv("BODY")
if body == nil or body == "" then body = '{"nums": [1, 2, 3]}' end
wrk.body = body
wrk.headers["Content-Type"] = "application/json"
