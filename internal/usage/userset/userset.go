// Package userset holds the small exact sets of users that decide whether a
// search query's text may be shown to a shared library's curators: a query
// is shown only once at least k distinct users searched it (k-anonymity,
// --usage.query-min-users), and deciding that needs no more than k members.
// A set holds at most k hashes of user IDs, so it stays a few words however
// many search the query, and sets merge (replicas, days, roll-ups) by union.
package userset

import (
	"encoding/binary"
	"encoding/hex"
	"slices"
	"strconv"
)

// Hash is a user ID as a set holds it: FNV-1a, 64 bits, the same on every
// replica and across restarts, computed without allocating.
func Hash(user string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(user); i++ {
		h ^= uint64(user[i])
		h *= 1099511628211
	}
	return h
}

// Set is distinct user hashes, ascending, at most k of them: fewer than k
// is every user seen; k is "k or more".
type Set []uint64

// Add adds h unless s holds it or holds k already.
func (s *Set) Add(h uint64, k int) {
	i, found := slices.BinarySearch(*s, h)
	if found || len(*s) >= k {
		return
	}
	*s = slices.Insert(*s, i, h)
}

// Union is the union of sets, its k smallest when larger: a union of k or
// more members is k members either way.
func Union(k int, sets ...Set) Set {
	var out Set
	for _, s := range sets {
		for _, h := range s {
			if i, found := slices.BinarySearch(out, h); !found {
				out = slices.Insert(out, i, h)
			}
		}
	}
	if len(out) > k {
		out = out[:k:k]
	}
	return out
}

// hashLen is a hash's length in Encode's text.
const hashLen = 16

// Encode is s as Redis keeps it: the hashes in hex, concatenated
// (AddScript appends to it).
func Encode(s Set) string {
	b := make([]byte, 0, hashLen*len(s))
	for _, h := range s {
		b = hex.AppendEncode(b, binary.BigEndian.AppendUint64(nil, h))
	}
	return string(b)
}

// Decode is Encode's inverse, at most k members; what is not a hash is
// skipped.
func Decode(s string, k int) Set {
	var out Set
	for i := 0; i+hashLen <= len(s); i += hashLen {
		if h, err := strconv.ParseUint(s[i:i+hashLen], 16, 64); err == nil {
			out.Add(h, k)
		}
	}
	return out
}

// AddScript adds sets to the sets a Redis hash keeps by query, in one step
// (replicas flushing at once lose no member), and drops those of queries
// no longer among the day's kept queries. KEYS[1] is the hash (query →
// Encode), KEYS[2] the day's query counts (sorted set); ARGV[1] is k,
// ARGV[2] how many queries are kept, then query and Encode pairs.
const AddScript = `
local k = tonumber(ARGV[1])
for i = 3, #ARGV, 2 do
  local q, add = ARGV[i], ARGV[i + 1]
  local cur = redis.call('HGET', KEYS[1], q) or ''
  local n = #cur
  for j = 1, #add, 16 do
    if #cur >= 16 * k then break end
    local h = string.sub(add, j, j + 15)
    local seen = false
    for m = 1, #cur, 16 do
      if string.sub(cur, m, m + 15) == h then seen = true break end
    end
    if not seen then cur = cur .. h end
  end
  if #cur ~= n or n == 0 then redis.call('HSET', KEYS[1], q, cur) end
end
if redis.call('HLEN', KEYS[1]) > tonumber(ARGV[2]) then
  for _, q in ipairs(redis.call('HKEYS', KEYS[1])) do
    if not redis.call('ZSCORE', KEYS[2], q) then redis.call('HDEL', KEYS[1], q) end
  end
end
return 0
`
