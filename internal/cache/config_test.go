package cache_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/skillsvc/skillsvc/internal/cache"
)

func TestFlags(t *testing.T) {
	var c cache.Config
	f := flag.NewFlagSet("", flag.ContinueOnError)
	c.RegisterFlagsWithPrefix("cache.", f)
	err := f.Parse([]string{
		"-cache.redis.addrs", "10.0.0.1:6379, 10.0.0.2:6379,",
		"-cache.redis.password", "hunter2",
		"-cache.redis.read-timeout", "100ms",
		"-cache.redis.breaker.failures", "3",
		"-cache.lru.max-bytes", "1024",
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.Redis.Addrs, "|"); got != "10.0.0.1:6379|10.0.0.2:6379" {
		t.Errorf("addrs = %q", got)
	}
	if c.Redis.Password.Value != "hunter2" || c.Redis.ReadTimeout != 100*time.Millisecond ||
		c.Redis.Breaker.Failures != 3 || c.LRU.MaxBytes != 1024 {
		t.Errorf("parsed config = %+v", c)
	}
	if c.Redis.KeyPrefix != "skillsvc:" || c.Redis.PoolSize <= 0 || c.Redis.Breaker.CoolDown <= 0 {
		t.Errorf("defaults not set: %+v", c.Redis)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	if fl := f.Lookup("cache.redis.password"); fl.Value.String() != "********" {
		t.Errorf("password flag prints %q", fl.Value.String())
	}
}

func TestDefaultConfig(t *testing.T) {
	c := cache.DefaultConfig()
	if c.Redis.Enabled() {
		t.Error("Redis enabled by default")
	}
	if err := c.Validate(); err != nil {
		t.Errorf("defaults do not validate: %v", err)
	}
}

func TestSecretHidden(t *testing.T) {
	cfg := cache.DefaultConfig()
	cfg.Redis.Password.Set("hunter2")
	var logged bytes.Buffer
	slog.New(slog.NewTextHandler(&logged, nil)).Info("config", "password", cfg.Redis.Password, "redis", cfg.Redis)
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]string{
		"%v": fmt.Sprintf("%v", cfg), "%+v": fmt.Sprintf("%+v", cfg), "%#v": fmt.Sprintf("%#v", cfg.Redis.Password),
		"%s": fmt.Sprintf("%s", cfg.Redis.Password), "slog": logged.String(), "yaml": string(out),
	} {
		if strings.Contains(s, "hunter2") {
			t.Errorf("%s shows the password: %s", name, s)
		}
		if !strings.Contains(s, "********") {
			t.Errorf("%s does not show ********: %s", name, s)
		}
	}
	var back cache.Config
	if err := yaml.Unmarshal([]byte("redis:\n  password: s3cret\n"), &back); err != nil || back.Redis.Password.Value != "s3cret" {
		t.Errorf("yaml password = %q, %v; want s3cret", back.Redis.Password.Value, err)
	}
	if s := (cache.Secret{}).String(); s != "" {
		t.Errorf("empty secret prints %q, want nothing", s)
	}
}

func TestValidate(t *testing.T) {
	valid := func() cache.Config {
		c := cache.DefaultConfig()
		c.Redis.Addrs = []string{"127.0.0.1:6380"}
		return c
	}
	tests := []struct {
		name   string
		change func(c *cache.Config)
		ok     bool
	}{
		{name: "valid", change: func(c *cache.Config) {}, ok: true},
		{name: "redis off ignores redis settings", change: func(c *cache.Config) { c.Redis.Addrs = nil; c.Redis.PoolSize = 0 }, ok: true},
		{name: "sentinel", change: func(c *cache.Config) { c.Redis.MasterName = "mymaster"; c.Redis.DB = 2 }, ok: true},
		{name: "cluster", change: func(c *cache.Config) { c.Redis.Addrs = append(c.Redis.Addrs, "127.0.0.1:6381") }, ok: true},
		{name: "tls with ca", change: func(c *cache.Config) { c.Redis.TLS = cache.TLSConfig{Enabled: true, CAFile: "ca.pem"} }, ok: true},
		{name: "no port", change: func(c *cache.Config) { c.Redis.Addrs = []string{"redis"} }},
		{name: "db with cluster", change: func(c *cache.Config) { c.Redis.Cluster = true; c.Redis.DB = 1 }},
		{name: "db with several nodes", change: func(c *cache.Config) { c.Redis.Addrs = append(c.Redis.Addrs, "h:1"); c.Redis.DB = 1 }},
		{name: "sentinel and cluster", change: func(c *cache.Config) { c.Redis.Cluster = true; c.Redis.MasterName = "m" }},
		{name: "ca without tls", change: func(c *cache.Config) { c.Redis.TLS.CAFile = "ca.pem" }},
		{name: "zero pool", change: func(c *cache.Config) { c.Redis.PoolSize = 0 }},
		{name: "unbounded read", change: func(c *cache.Config) { c.Redis.ReadTimeout = 0 }},
		{name: "hash tag in prefix", change: func(c *cache.Config) { c.Redis.KeyPrefix = "{skillsvc}:" }},
		{name: "breaker never opens", change: func(c *cache.Config) { c.Redis.Breaker.Failures = 0 }},
		{name: "no cool-down", change: func(c *cache.Config) { c.Redis.Breaker.CoolDown = 0 }},
		{name: "no lru bytes", change: func(c *cache.Config) { c.LRU.MaxBytes = 0 }},
		{name: "no lru ttl", change: func(c *cache.Config) { c.LRU.MaxTTL = 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := valid()
			tt.change(&c)
			err := c.Validate()
			if tt.ok && err != nil {
				t.Errorf("Validate: %v, want nil", err)
			}
			if !tt.ok && !errors.Is(err, cache.ErrInvalidConfig) {
				t.Errorf("Validate: %v, want ErrInvalidConfig", err)
			}
		})
	}
}

func TestNewRejects(t *testing.T) {
	c := cache.DefaultConfig()
	c.LRU.MaxBytes = -1
	if _, err := cache.New(c, nil, nil); !errors.Is(err, cache.ErrInvalidConfig) {
		t.Errorf("New with an invalid config: %v", err)
	}
	r := cache.DefaultConfig().Redis
	if _, err := cache.NewRedis(r); !errors.Is(err, cache.ErrInvalidConfig) {
		t.Errorf("NewRedis without an address: %v", err)
	}
	r.Addrs = []string{"127.0.0.1:1"}
	r.TLS = cache.TLSConfig{Enabled: true, CAFile: t.TempDir() + "/missing.pem"}
	if _, err := cache.NewRedis(r); err == nil {
		t.Error("NewRedis with a missing CA file: no error")
	}
}
