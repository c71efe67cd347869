package cache

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/redis/go-redis/v9"
)

// routeRedisLog sends go-redis's own log lines (one per failed dial or bad
// connection, many a second while Redis is down) to log at debug level; the
// breaker already logs an outage once. go-redis has one logger per
// process, so the cache New builds with Redis and a logger owns it (a
// process builds one).
func routeRedisLog(log *slog.Logger) {
	redis.SetLogger(redisLogger{log})
}

type redisLogger struct{ log *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	if l.log.Enabled(ctx, slog.LevelDebug) {
		l.log.DebugContext(ctx, "redis: "+fmt.Sprintf(format, v...))
	}
}
