package app

import (
	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/usage"
)

// newUsageStore is where the replicas flush their usage counts: Redis, on a
// client of its own (a flush's pipeline does not take the cache's
// connections), when there is Redis and usage is on; nil otherwise (the
// counts stay in process). closeStore closes that client, after the
// services' last flush.
func newUsageStore(cfg Config) (_ usage.Store, closeStore func(), _ error) {
	if !cfg.Usage.Enabled || !cfg.Cache.Redis.Enabled() {
		return nil, func() {}, nil
	}
	red, err := cache.NewRedis(cfg.Cache.Redis)
	if err != nil {
		return nil, nil, err
	}
	client, prefix := red.Commands("usage")
	return usage.NewRedisStore(client, prefix, cfg.Usage), func() { _ = red.Close() }, nil
}
