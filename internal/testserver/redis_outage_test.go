package testserver

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestRestartableRedis(t *testing.T) {
	t.Parallel()
	r := StartRestartableRedis(t)
	client := redis.NewClient(&redis.Options{
		Addr: r.Addr, Protocol: 2, MaxRetries: -1, DialerRetries: 1,
		DialTimeout: 200 * time.Millisecond, ReadTimeout: 200 * time.Millisecond, WriteTimeout: 200 * time.Millisecond,
	})
	t.Cleanup(func() { client.Close() })
	ping := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		return client.Ping(ctx).Err()
	}
	setGet(t, &r.Redis)

	r.Pause(t)
	start := time.Now()
	if err := ping(); err == nil {
		t.Error("PING of a paused server answered")
	}
	if d := time.Since(start); d > 900*time.Millisecond {
		t.Errorf("PING of a paused server took %v, want about the 200ms read timeout", d)
	}
	r.Resume(t)
	deadline := time.Now().Add(5 * time.Second)
	for ping() != nil {
		if time.Now().After(deadline) {
			t.Fatal("PING after Resume: no answer within 5s")
		}
		time.Sleep(pollInterval)
	}

	r.Stop(t)
	if err := ping(); err == nil {
		t.Error("PING of a stopped server answered")
	}
	r.Restart(t)
	setGet(t, &r.Redis)
}

func TestStartRedisCluster(t *testing.T) {
	t.Parallel()
	r := StartRedisCluster(t)
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{r.Addr}, Protocol: 2})
	t.Cleanup(func() { client.Close() })
	ctx := t.Context()
	// Keys in different slots: one per command works, MGET across slots must not.
	for _, k := range []string{"a", "b", "c"} {
		if err := client.Set(ctx, k, k, time.Minute).Err(); err != nil {
			t.Fatalf("SET %s: %v", k, err)
		}
	}
	if err := client.MGet(ctx, "a", "b", "c").Err(); err == nil || !strings.Contains(err.Error(), "CROSSSLOT") {
		t.Errorf("MGET across slots: %v, want CROSSSLOT", err)
	}
	if err := client.MGet(ctx, "{u}a", "{u}b").Err(); err != nil {
		t.Errorf("MGET in one slot: %v", err)
	}
}
