package testserver

import (
	"context"
	"errors"
	"net"
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
	// The ten seconds only bound a hang: which timeout ended a call shows
	// in its error, whatever the time it took on this machine.
	ping := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return client.Ping(ctx).Err()
	}
	setGet(t, &r.Redis)

	r.Pause(t)
	var ne net.Error
	if err := ping(); !errors.As(err, &ne) || !ne.Timeout() || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("PING of a paused server: %v, want the client's 200ms read timeout", err)
	}
	r.Resume(t)
	deadline := time.Now().Add(30 * time.Second)
	for ping() != nil {
		if time.Now().After(deadline) {
			t.Fatal("PING after Resume: no answer within 30s")
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
