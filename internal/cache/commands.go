package cache

import "github.com/redis/go-redis/v9"

// commandSpace keeps the keys of packages that use Redis's own data types
// (counters, sketches) apart from values, locks and channels.
const commandSpace = "c:"

// Commands returns the Redis client and the prefix under which the package
// named name keeps its own keys: the deployment's key prefix and keyspace,
// then "c:" and name. It is for data the byte Cache cannot hold (usage's
// counters and HyperLogLogs: HINCRBY, PFADD, PFCOUNT), so the Cache
// interface stays what every backend can do. The caller picks its hash
// tags, and closing r closes the client.
func (r *Redis) Commands(name string) (redis.UniversalClient, string) {
	return r.client, r.prefix + commandSpace + name + ":"
}
