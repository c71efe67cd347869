package mcpserver

import (
	"context"
	"log/slog"
	"strings"
)

// sdkLogger is the logger the SDK's servers write to: log's, with two of
// the SDK's lines lowered to DEBUG because they describe the client, not a
// fault here. A request for a method the sessionless revision removed
// (resources/subscribe on 2026-07-28) is answered -32601 and is the
// client's to fix, not an ERROR; and a change notification a session has
// no open stream for is the SDK's one WARN per session (1,024 a change at
// the session cap), where the watcher logs one line per identity instead.
func sdkLogger(log *slog.Logger) *slog.Logger {
	return slog.New(sdkHandler{log.Handler()})
}

type sdkHandler struct{ slog.Handler }

// Enabled lets the lowered records through to Handle, which decides.
func (h sdkHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.Handler.Enabled(ctx, l) || h.Handler.Enabled(ctx, slog.LevelDebug)
}

func (h sdkHandler) Handle(ctx context.Context, r slog.Record) error {
	if clientSide(r) {
		r.Level = slog.LevelDebug
	}
	if !h.Handler.Enabled(ctx, r.Level) {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func clientSide(r slog.Record) bool {
	switch {
	case r.Level == slog.LevelError && r.Message == "method removed in the new protocol":
		return true
	case r.Level == slog.LevelWarn && strings.HasPrefix(r.Message, "calling notifications/"):
		return true
	}
	return false
}

func (h sdkHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return sdkHandler{h.Handler.WithAttrs(as)}
}
func (h sdkHandler) WithGroup(name string) slog.Handler { return sdkHandler{h.Handler.WithGroup(name)} }
