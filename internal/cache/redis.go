package cache

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// Values and locks live in separate key spaces under the prefix, so a lock
// can never be read as a value or overwrite one.
const (
	valueSpace = "v:"
	lockSpace  = "l:"
)

// unlockScript deletes the lock only while it still holds the caller's
// token: after the TTL another replica may own it.
var unlockScript = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("DEL", KEYS[1])
end
return 0`)

// Redis is a Cache on Redis, shared by every replica. Values are stored
// framed by the Keyspace under KeyPrefix + Keyspace + "v:" + key with PX
// expiry; locks under KeyPrefix + Keyspace + "l:" + key.
//
// Redis Cluster: a multi-key command must stay in one hash slot, so Store
// and Delete pipeline one command per key, and Fetch uses one MGET on a
// single node or Sentinel but pipelined GETs on a Cluster. A caller that puts
// the user in a hash tag ("index:{alice}:…", as the catalog does) keeps a
// user's keys in one slot, so such a batch goes to one node.
type Redis struct {
	client  redis.UniversalClient
	cluster bool
	prefix  string // KeyPrefix + the keyspace's
	space   Keyspace
	// foreign counts values refused as another keyspace's (nil: not
	// counted).
	foreign func()
	// unlockTimeout bounds a release, which runs after the caller's
	// context may have ended.
	unlockTimeout time.Duration
}

var _ Cache = (*Redis)(nil)

// NewRedis connects lazily: it fails only on an invalid config or an
// unreadable CA file, never because Redis is down.
func NewRedis(cfg RedisConfig) (*Redis, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if !cfg.Enabled() {
		return nil, fmt.Errorf("%w: redis has no address", ErrInvalidConfig)
	}
	var tlsCfg *tls.Config
	if cfg.TLS.Enabled {
		tlsCfg = &tls.Config{MinVersion: tls.VersionTLS12, ServerName: cfg.TLS.ServerName}
		if cfg.TLS.CAFile != "" {
			pem, err := os.ReadFile(cfg.TLS.CAFile)
			if err != nil {
				return nil, fmt.Errorf("cache: redis tls.ca-file: %w", err)
			}
			tlsCfg.RootCAs = x509.NewCertPool()
			if !tlsCfg.RootCAs.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("%w: redis tls.ca-file %s holds no PEM certificate", ErrInvalidConfig, cfg.TLS.CAFile)
			}
		}
	}
	client := redis.NewUniversalClient(&redis.UniversalOptions{
		Addrs:         cfg.Addrs,
		IsClusterMode: cfg.Cluster,
		MasterName:    cfg.MasterName,
		Username:      cfg.Username,
		Password:      cfg.Password.Value,
		DB:            cfg.DB,
		TLSConfig:     tlsCfg,
		PoolSize:      cfg.PoolSize,
		DialTimeout:   cfg.DialTimeout,
		ReadTimeout:   cfg.ReadTimeout,
		WriteTimeout:  cfg.WriteTimeout,
		PoolTimeout:   cfg.PoolTimeout,
		// Without it go-redis ignores the caller's deadline and waits out
		// its own timeouts.
		ContextTimeoutEnabled: true,
		// A cache call is one attempt: a failure is a miss, and retries or
		// repeated dials would only stretch the time a caller waits on a
		// Redis that is down (the breaker handles recovery).
		MaxRetries:    -1,
		DialerRetries: 1,
		// The maintenance-notification handshake is for managed Redis
		// Enterprise; elsewhere it is only a failing command per connection.
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
	_, cluster := client.(*redis.ClusterClient)
	return &Redis{
		client:        client,
		cluster:       cluster,
		prefix:        cfg.KeyPrefix + cfg.Keyspace.keyPrefix(),
		space:         cfg.Keyspace,
		unlockTimeout: cfg.DialTimeout + cfg.WriteTimeout + cfg.ReadTimeout,
	}, nil
}

// Fetch implements Cache.
func (r *Redis) Fetch(ctx context.Context, keys []string) (map[string][]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	found := make(map[string][]byte, len(keys))
	if len(keys) == 0 {
		return found, nil
	}
	full := make([]string, len(keys))
	for i, k := range keys {
		full[i] = r.prefix + valueSpace + k
	}
	if r.cluster {
		cmds := make([]*redis.StringCmd, len(keys))
		_, err := r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, k := range full {
				cmds[i] = p.Get(ctx, k)
			}
			return nil
		})
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, r.fail(ctx, "fetch", err)
		}
		for i, cmd := range cmds {
			v, err := cmd.Bytes()
			switch {
			case err == nil:
				if v, ok := r.space.unframe(v); ok {
					found[keys[i]] = v
				} else {
					r.refused()
				}
			case !errors.Is(err, redis.Nil):
				return nil, r.fail(ctx, "fetch", err)
			}
		}
		return found, nil
	}
	vals, err := r.client.MGet(ctx, full...).Result()
	if err != nil {
		return nil, r.fail(ctx, "fetch", err)
	}
	for i, v := range vals {
		// A bulk string reply is a string; a missing key is nil.
		if s, ok := v.(string); ok {
			if v, ok := r.space.unframeString(s); ok {
				found[keys[i]] = v
			} else {
				r.refused()
			}
		}
	}
	return found, nil
}

// Store implements Cache.
func (r *Redis) Store(ctx context.Context, items map[string][]byte, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkTTL(ttl); err != nil {
		return err
	}
	if len(items) == 0 {
		return nil
	}
	ttl = max(ttl, time.Millisecond) // PX counts milliseconds
	_, err := r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for k, v := range items {
			p.Set(ctx, r.prefix+valueSpace+k, r.space.frame(v), ttl)
		}
		return nil
	})
	if err != nil {
		return r.fail(ctx, "store", err)
	}
	return nil
}

// Delete implements Cache.
func (r *Redis) Delete(ctx context.Context, keys ...string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(keys) == 0 {
		return nil
	}
	// UNLINK frees large values off the main thread.
	_, err := r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, k := range keys {
			p.Unlink(ctx, r.prefix+valueSpace+k)
		}
		return nil
	})
	if err != nil {
		return r.fail(ctx, "delete", err)
	}
	return nil
}

// TryLock implements Cache across replicas with SET NX PX and a release
// script that checks the holder's token.
func (r *Redis) TryLock(ctx context.Context, key string, ttl time.Duration) (func(), bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	if err := checkTTL(ttl); err != nil {
		return nil, false, err
	}
	full := r.prefix + lockSpace + key
	token := rand.Text()
	ok, err := r.client.SetNX(ctx, full, token, max(ttl, time.Millisecond)).Result()
	if err != nil {
		return nil, false, r.fail(ctx, "lock", err)
	}
	if !ok {
		return nil, false, nil
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), r.unlockTimeout)
		defer cancel()
		// An error leaves the lock to expire by its TTL.
		_ = unlockScript.Run(ctx, r.client, []string{full}, token).Err()
	}, true, nil
}

// refused counts a value of another keyspace, which is a miss: it is left
// in place (it may be another deployment's own) until a Store replaces it.
func (r *Redis) refused() {
	if r.foreign != nil {
		r.foreign()
	}
}

// Close implements Cache.
func (r *Redis) Close() error { return r.client.Close() }

// fail wraps a Redis error: the caller's context error when it ended (so a
// cancellation does not count against Redis), ErrUnavailable otherwise.
func (r *Redis) fail(ctx context.Context, op string, err error) error {
	if cerr := callerDone(ctx); cerr != nil {
		return fmt.Errorf("cache: redis %s: %w: %w", op, cerr, err)
	}
	return fmt.Errorf("cache: redis %s: %w: %w", op, ErrUnavailable, err)
}
