package app

import (
	"log/slog"
	"runtime/debug"
)

// MemoryLimit is the soft limit on the Go runtime's memory that cfg asks
// for, and whether one is set. GOMEMLIMIT in the environment wins (the Helm
// chart sets it from the pod's limit). Without either, the heap may reach
// twice what is live (GOGC), and what is live is mostly the caches once they
// fill: the default limit is twice their budgets, which the collector then
// keeps to instead of doubling past them.
func MemoryLimit(cfg Config, getenv func(string) string) (int64, bool) {
	switch {
	case getenv("GOMEMLIMIT") != "", cfg.MemoryLimit < 0:
		return 0, false
	case cfg.MemoryLimit > 0:
		return cfg.MemoryLimit, true
	}
	return 2 * (cfg.Skills.MaxHeldBytes + cfg.Skills.ReplyCacheBytes + cfg.Cache.LRU.MaxBytes), true
}

// SetMemoryLimit applies MemoryLimit to the runtime.
func SetMemoryLimit(cfg Config, getenv func(string) string, log *slog.Logger) {
	if limit, ok := MemoryLimit(cfg, getenv); ok {
		debug.SetMemoryLimit(limit)
		log.Info("memory limit", "bytes", limit)
	}
}
