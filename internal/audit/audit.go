// Package audit writes the audit trail: one structured line per change
// (write, edit, delete, upload, settings change, admin call) and per denied
// request, saying who, which RPC, which path, the result and the request
// ID. It has its own logger and output so it can be routed and kept apart
// from the service log. Values from callers are escaped: a path cannot
// forge a line or hide itself with control characters.
package audit

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/options"
	"github.com/skillsvc/skillsvc/internal/requestid"
)

// Config chooses where audit lines go.
type Config struct {
	Output string
}

// RegisterFlagsWithPrefix registers the flags, e.g. with prefix "audit.".
func (c *Config) RegisterFlagsWithPrefix(prefix string, f *flag.FlagSet) {
	f.StringVar(&c.Output, prefix+"output", "stdout", `Where audit lines (JSON, one per change or denied request) go: "stdout", "stderr", a file path (appended), or "off". The service log is on stderr.`)
	options.Tag(f, options.Basic, prefix+"output")
}

// Open returns the logger cfg describes and what to close at exit.
func Open(cfg Config) (*Logger, io.Closer, error) {
	switch cfg.Output {
	case "off":
		return nil, io.NopCloser(nil), nil
	case "stdout":
		return New(os.Stdout), io.NopCloser(nil), nil
	case "stderr":
		return New(os.Stderr), io.NopCloser(nil), nil
	case "":
		return nil, nil, errors.New("audit: output must not be empty (use off)")
	}
	f, err := os.OpenFile(cfg.Output, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("audit: %w", err)
	}
	return New(f), f, nil
}

// Logger writes audit lines. A nil *Logger writes nothing.
type Logger struct {
	log *slog.Logger // the JSON handler writes each line whole
}

// New returns a Logger writing JSON lines to w.
func New(w io.Writer) *Logger {
	return &Logger{log: slog.New(slog.NewJSONHandler(w, nil)).With("log", "audit")}
}

// changes are the RPCs that change what is stored; AdminService's calls
// are all audited too.
var changes = map[string]bool{
	"/skillsvc.v1.FilesystemService/Write":       true,
	"/skillsvc.v1.FilesystemService/Edit":        true,
	"/skillsvc.v1.FilesystemService/Delete":      true,
	"/skillsvc.v1.FilesystemService/Upload":      true,
	"/skillsvc.v1.SkillsService/SetSkillEnabled": true,
	// The authors' changes; a review's line names the version, the
	// decision and the comment.
	"/skillsvc.v1.LibraryService/PublishSkill":       true,
	"/skillsvc.v1.LibraryService/DeleteSkill":        true,
	"/skillsvc.v1.LibraryService/SetSkillLabel":      true,
	"/skillsvc.v1.LibraryService/RollbackSkill":      true,
	"/skillsvc.v1.LibraryService/ReviewSkillVersion": true,
	"/skillsvc.v1.LibraryService/AttachSignature":    true,
}

// audited reports whether a call ending with code gets a line.
func audited(method string, code codes.Code) bool {
	return changes[method] || auth.AdminMethod(method) ||
		code == codes.Unauthenticated || code == codes.PermissionDenied
}

// Record writes the line for one call: err is its final status error.
// Its target is read from req (nil when unknown).
func (l *Logger) Record(ctx context.Context, method string, req any, start time.Time, err error) {
	if l == nil || !audited(method, status.Code(err)) {
		return
	}
	l.write(ctx, method, req, start, status.Convert(err))
}

// Refused writes the line for a request an HTTP edge refused before any
// RPC ran (/mcp's 401, 403, 404 and 429): every refusal is a line, whatever
// its code. err is a status error; the principal, when one was verified,
// and the request ID come from ctx as for a call.
func (l *Logger) Refused(ctx context.Context, endpoint string, start time.Time, err error) {
	if l == nil {
		return
	}
	l.write(ctx, endpoint, nil, start, status.Convert(err))
}

func (l *Logger) write(ctx context.Context, method string, req any, start time.Time, st *status.Status) {
	attrs := []slog.Attr{
		slog.String("request_id", requestid.From(ctx)),
		slog.String("rpc", method),
	}
	if p, ok := auth.PrincipalFrom(ctx); ok {
		attrs = append(attrs, slog.String("user", clean(p.User)), slog.String("thread", clean(p.Thread)))
		if p.Ticket != "" {
			attrs = append(attrs, slog.String("ticket", clean(p.Ticket)))
		}
		if p.Teams != "" {
			attrs = append(attrs, slog.String("teams", clean(p.Teams)))
		}
		if p.Subject != "" {
			attrs = append(attrs, slog.String("subject", clean(p.Subject)))
		}
		attrs = append(attrs, slog.Bool("admin", p.Admin))
	} else {
		attrs = append(attrs, slog.Bool("authenticated", false))
	}
	attrs = append(attrs, target(req)...)
	attrs = append(attrs, slog.String("result", st.Code().String()))
	if st.Code() != codes.OK {
		attrs = append(attrs, slog.String("error", clean(st.Message())))
	}
	attrs = append(attrs, slog.Int64("duration_ms", time.Since(start).Milliseconds()))
	l.log.LogAttrs(ctx, slog.LevelInfo, "audit", attrs...)
}

// target names what a request acts on.
func target(req any) []slog.Attr {
	var out []slog.Attr
	switch r := req.(type) {
	case nil:
	case *skillsvcv1.UploadRequest:
		if h := r.GetHeader(); h != nil {
			out = append(out, slog.String("path", clean(h.GetPath())))
		}
	case *skillsvcv1.PublishSkillRequest:
		if h := r.GetHeader(); h != nil {
			out = library(out, h.GetLibrary())
			out = append(out, slog.String("skill", clean(h.GetName())), slog.String("category", clean(h.GetCategory())))
			if h.GetValidateOnly() {
				out = append(out, slog.Bool("validate_only", true))
			}
		}
	case *skillsvcv1.ReviewSkillVersionRequest:
		out = library(out, r.GetLibrary())
		out = append(out, slog.String("skill", clean(r.GetName())), slog.String("version", clean(r.GetVersion())),
			slog.Bool("approve", r.GetApprove()), slog.String("comment", clean(r.GetComment())))
	case *skillsvcv1.SetSkillScopeRequest:
		out = append(library(out, r.GetLibrary()), slog.String("scope", clean(r.GetScope().GetName())))
	case *skillsvcv1.DeleteSkillScopeRequest:
		out = append(library(out, r.GetLibrary()), slog.String("scope", clean(r.GetName())), slog.Bool("delete", true))
	case *skillsvcv1.ListSkillScopesRequest:
		out = library(out, r.GetLibrary())
	case *skillsvcv1.SetSkillProtectedRequest:
		out = append(library(out, r.GetLibrary()), slog.String("skill", clean(r.GetName())), slog.Bool("protected", r.GetProtected()))
	case interface {
		GetLibrary() *skillsvcv1.LibraryRef
		GetName() string
	}:
		out = library(out, r.GetLibrary())
		out = append(out, slog.String("skill", clean(r.GetName())))
		if v, ok := r.(interface{ GetVersion() string }); ok && v.GetVersion() != "" {
			out = append(out, slog.String("version", clean(v.GetVersion())))
		}
	case *skillsvcv1.DropSkillIndexRequest:
		out = library(out, &skillsvcv1.LibraryRef{User: r.GetUser(), Shared: r.GetShared(), Team: r.GetTeam()})
	case interface{ GetPath() string }:
		if p := r.GetPath(); p != "" {
			out = append(out, slog.String("path", clean(p)))
		}
	}
	if r, ok := req.(interface {
		GetLibrary() *skillsvcv1.LibraryRef
		GetPath() string
	}); ok {
		out = library(out, r.GetLibrary())
	}
	if r, ok := req.(interface{ GetEnabled() bool }); ok {
		out = append(out, slog.Bool("enabled", r.GetEnabled()))
	}
	return out
}

// library names the library a request acts on.
func library(out []slog.Attr, l *skillsvcv1.LibraryRef) []slog.Attr {
	if l.GetUser() != "" {
		out = append(out, slog.String("target_user", clean(l.GetUser())))
	}
	if l.GetTeam() != "" {
		out = append(out, slog.String("target_team", clean(l.GetTeam())))
	}
	if l.GetShared() {
		out = append(out, slog.Bool("shared", true))
	}
	return out
}

// maxValue bounds one value in a line.
const maxValue = 1024

// clean makes a caller's string safe for a line: invalid UTF-8, control
// and bidirectional-formatting characters escaped as \x.. or \u...., and
// at most maxValue bytes kept.
func clean(s string) string {
	ok := len(s) <= maxValue
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == '\\' {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s) && b.Len() < maxValue; {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\':
			b.WriteString(`\\`)
		case unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r):
			if r < 0x80 {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	if b.Len() >= maxValue {
		return b.String()[:maxValue] + "…"
	}
	return b.String()
}

// UnaryServerInterceptor records unary calls. It sits outside the error
// table, so it sees the final status.
func (l *Logger) UnaryServerInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if l == nil {
			return handler(ctx, req)
		}
		start := time.Now()
		resp, err := handler(ctx, req)
		l.Record(ctx, info.FullMethod, req, start, err)
		return resp, err
	}
}

// StreamServerInterceptor records streaming calls; an upload's path comes
// from its first message.
func (l *Logger) StreamServerInterceptor() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if l == nil {
			return handler(srv, ss)
		}
		start := time.Now()
		fs := &firstStream{ServerStream: ss}
		err := handler(srv, fs)
		l.Record(ss.Context(), info.FullMethod, fs.first, start, err)
		return err
	}
}

// firstStream keeps the first message received.
type firstStream struct {
	grpc.ServerStream
	first any
}

func (s *firstStream) RecvMsg(m any) error {
	err := s.ServerStream.RecvMsg(m)
	if err == nil && s.first == nil {
		s.first = m
	}
	return err
}
