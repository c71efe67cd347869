package testserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// StartRedisCluster starts a one-node Redis Cluster that owns every hash
// slot, for this test; t.Cleanup stops it. One node is enough to test a
// Cluster client: Redis refuses a multi-key command whose keys hash to
// different slots (CROSSSLOT) even when one node owns them all.
func StartRedisCluster(t testing.TB) *Redis {
	t.Helper()
	Integration(t, "redis-server")
	bin, err := findBinary(redisBinEnv, onPath("redis-server"), atPath("/usr/bin/redis-server"))
	if err != nil {
		unavailable(t, "redis-server", redisBinEnv, fmt.Errorf("finding redis-server: %w", err))
	}
	for attempt := 1; ; attempt++ {
		r, p, err := startRedisClusterOnce(bin)
		if err == nil {
			t.Cleanup(p.stop)
			return r
		}
		if !errors.Is(err, errPortRace) || attempt == startAttempts {
			unavailable(t, "redis-server (cluster)", redisBinEnv, err)
		}
	}
}

func startRedisClusterOnce(bin string) (*Redis, *process, error) {
	r, p, err := startRedisNode(bin, true)
	if err != nil {
		return nil, nil, err
	}
	if err := assignAllSlots(r.Addr); err != nil {
		p.stop()
		return nil, nil, fmt.Errorf("%v; last output:\n%s", err, p.out.Tail(30))
	}
	return r, p, nil
}

// assignAllSlots gives the node every slot and waits until the cluster
// reports itself ok.
func assignAllSlots(addr string) error {
	client := redis.NewClient(&redis.Options{
		Addr:                     addr,
		Protocol:                 2,
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
		MaxRetries:               -1,
		PoolSize:                 1,
	})
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), redisReadyTimeout)
	defer cancel()
	if err := client.ClusterAddSlotsRange(ctx, 0, 16383).Err(); err != nil {
		return fmt.Errorf("CLUSTER ADDSLOTSRANGE: %w", err)
	}
	for {
		info, err := client.ClusterInfo(ctx).Result()
		if err == nil && strings.Contains(info, "cluster_state:ok") {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("cluster at %s not ok after %v (last CLUSTER INFO: %v)", addr, redisReadyTimeout, err)
		}
		time.Sleep(pollInterval)
	}
}
