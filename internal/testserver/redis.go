package testserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

const (
	redisReadyTimeout = 20 * time.Second
	redisBinEnv       = "SKILLSVC_REDIS_BIN"
)

// Redis is a running redis-server.
type Redis struct {
	Addr string // 127.0.0.1:PORT
}

// StartRedis starts a redis-server for this test; t.Cleanup stops it.
func StartRedis(t testing.TB) *Redis {
	t.Helper()
	Integration(t, "redis-server")
	r, p, err := startRedis()
	if err != nil {
		unavailable(t, "redis-server", redisBinEnv, err)
	}
	t.Cleanup(p.stop)
	return r
}

// SharedRedis returns the test binary's shared redis-server, starting it on
// first use. Tests sharing it must not assume an empty keyspace: give keys a
// per-test prefix. TestMain must call Shutdown to stop it.
func SharedRedis(t testing.TB) *Redis {
	t.Helper()
	return sharedRedis.get(t)
}

func startRedis() (*Redis, *process, error) {
	bin, err := findBinary(redisBinEnv, onPath("redis-server"), atPath("/usr/bin/redis-server"))
	if err != nil {
		return nil, nil, fmt.Errorf("finding redis-server: %w", err)
	}
	for attempt := 1; ; attempt++ {
		r, p, err := startRedisOnce(bin)
		if err == nil {
			return r, p, nil
		}
		if !errors.Is(err, errPortRace) || attempt == startAttempts {
			return nil, nil, err
		}
	}
}

func startRedisOnce(bin string) (*Redis, *process, error) { return startRedisNode(bin, false) }

// startRedisNode starts one redis-server with no persistence on a free
// loopback port; with cluster, as a cluster node (which needs a second port
// for its cluster bus).
func startRedisNode(bin string, cluster bool) (*Redis, *process, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, nil, err
	}
	port := ports[0]
	dir, err := os.MkdirTemp("", "skillsvc-redis-")
	if err != nil {
		return nil, nil, err
	}
	args := []string{
		"--port", strconv.Itoa(port),
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		"--dir", dir,
		"--daemonize", "no",
	}
	if cluster {
		args = append(args, "--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(ports[1]), "--cluster-config-file", "nodes.conf")
	}
	p, err := startProcess("redis-server", dir, bin, args, os.Environ())
	if err != nil {
		return nil, nil, err
	}
	r := &Redis{Addr: "127.0.0.1:" + strconv.Itoa(port)}
	if err := waitRedisReady(p, r.Addr, port); err != nil {
		p.stop()
		return nil, nil, err
	}
	return r, p, nil
}

// waitRedisReady polls PING until the server answers PONG.
func waitRedisReady(p *process, addr string, port int) error {
	client := redis.NewClient(&redis.Options{
		Addr: addr,
		// A bare RESP2 connection: no HELLO, CLIENT SETINFO or maintenance
		// notification handshake to fail (and log) against older servers.
		Protocol:                 2,
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
		DialTimeout:              time.Second,
		ReadTimeout:              time.Second,
		WriteTimeout:             time.Second,
		MaxRetries:               -1,
		PoolSize:                 1,
	})
	defer client.Close()

	deadline := time.Now().Add(redisReadyTimeout)
	for {
		if p.exited() {
			if isPortRace(p.out.Tail(30)) {
				return fmt.Errorf("%w: %s", errPortRace, p.exitReport())
			}
			return errors.New(p.exitReport())
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		pong, err := client.Ping(ctx).Result()
		cancel()
		if err == nil && pong == "PONG" {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis-server at %s not ready after %v (last PING: %q, %v); last output:\n%s",
				addr, redisReadyTimeout, pong, err, p.out.Tail(30))
		}
		time.Sleep(pollInterval)
	}
	// The PONG may have come from another redis-server (say, another
	// package's test binary) that won the port while ours was starting up.
	if ours, err := listensOn(p.cmd.Process.Pid, port); err != nil {
		return fmt.Errorf("checking that redis-server owns port %d: %w", port, err)
	} else if !ours {
		return fmt.Errorf("%w: another server answered on port %d", errPortRace, port)
	}
	return nil
}
