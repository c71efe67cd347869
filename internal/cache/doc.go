// Package cache is skillsvc's byte-oriented cache, shaped like grafana/dskit's:
// one small ctx-first interface (Fetch, Store with a TTL, Delete, and TryLock,
// a short lock so that one replica at a time revalidates something), with an
// in-process LRU bounded in bytes, Redis shared by the replicas (single node,
// Sentinel or Cluster through go-redis's UniversalClient), a circuit Breaker
// around Redis and Tiered, the LRU in front of Redis, all proven by the one
// conformance suite in cachetest. New builds the stack a Config asks for:
// the LRU alone when Redis has no address, otherwise Tiered(LRU,
// Breaker(Redis)), instrumented. A Redis that is down or slow degrades the
// cache, never the service: every call is bounded by short timeouts and the
// caller's deadline, the breaker then skips Redis until a probe succeeds,
// and Tiered answers from the LRU with misses meanwhile. What is cached, under
// which keys and for how long is the policy of the package that owns the
// data (the skills catalog), not of this one; that package puts the user in a
// Redis hash tag ("…{alice}…") so a user's keys share a Cluster slot. In
// Redis every key, lock and channel is under the deployment's Keyspace and
// every value framed with it, so deployments sharing a Redis stay apart. Run
// Redis as a cache: `maxmemory` set with `maxmemory-policy allkeys-lru`, no
// persistence needed; every key this package writes has a TTL, so a missed
// Delete or a full Redis heals by itself.
//
// Held is the other cache a replica keeps: decoded values (library indexes,
// the catalog's layers, views and search indexes) on one byte budget, least
// recently used out whatever their kind, each charged its owner's estimate
// of the heap it keeps alive (AllocBytes and the generic estimates of
// estimate.go).
package cache
