package fleet

import "github.com/redis/go-redis/v9"

// budgetScript applies, atomically on one key, a batch of successes,
// failures and takes to the shared bucket, and reports how many of the
// failures may be retried and how many takes got their token. It is gRPC
// A6's rule, exactly as retry's local bucket applies it: a failure takes
// its cost, one token unless a class says otherwise (retry.Class.Cost,
// never below zero), a success refunds TokenRatio (never above
// MaxTokens), and a retry is allowed while more than half the tokens remain
// after the failure. A take (retry.TokenBucket.Take, which hedges spend)
// takes one token only if more than half remain after it, and nothing
// otherwise. A batch applies the successes first (they happened before the
// decisions were asked for), then the failures one by one, then the takes.
//
// The key holds the milli-tokens missing from a full bucket, so that a
// missing key is a full bucket: the script deletes the key when the bucket
// is full again, and a fleet at rest keeps nothing in Redis. It writes
// with SET even then, so that a server that refuses writes (maxmemory with
// noeviction) fails every run, flushes included, and the Budget keeps
// deciding locally instead of switching back and forth. The budget has no
// notion of time, so the script needs no clock.
//
// KEYS[1]: the bucket. ARGV[1]: capacity in milli-tokens; ARGV[2]: refund
// per success in milli-tokens; ARGV[3]: the number of successes; ARGV[4]:
// the number of failures asking for a retry, n; ARGV[5]: the number of
// takes (both 0 for a flush of successes only); ARGV[6] to ARGV[5+n]: each
// failure's cost in milli-tokens, in order (1000 for one token). Returns {allowed, used, taken}:
// how many of the failures may be retried and how many takes got a token
// (as the bucket only empties along them, whatever the costs, the allowed
// ones are the first of each kind), and the milli-tokens missing from the bucket afterwards,
// the level the process falls back from if Redis stops answering.
var budgetScript = redis.NewScript(`
local cap = tonumber(ARGV[1])
local half = math.floor(cap / 2)
local used = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
used = math.max(0, math.min(used, cap) - tonumber(ARGV[2]) * tonumber(ARGV[3]))
local allowed = 0
for i = 1, tonumber(ARGV[4]) do
	used = math.min(used + tonumber(ARGV[5 + i]), cap)
	if cap - used > half then allowed = allowed + 1 end
end
local taken = 0
for _ = 1, tonumber(ARGV[5]) do
	if cap - (used + 1000) <= half then break end
	used = used + 1000
	taken = taken + 1
end
redis.call('SET', KEYS[1], string.format('%d', used))
if used <= 0 then redis.call('DEL', KEYS[1]) end
return {allowed, used, taken}
`)
