package auth_test

import (
	"context"
	"errors"
	"testing"

	"google.golang.org/grpc/metadata"

	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/mounts"
)

func TestMetadata(t *testing.T) {
	for _, tc := range []struct {
		name string
		md   metadata.MD
		want mounts.Identity
		ok   bool
	}{
		{"user and thread", metadata.Pairs(auth.UserKey, "alice", auth.ThreadKey, "t1"), mounts.Identity{User: "alice", Thread: "t1"}, true},
		{"with ticket", metadata.Pairs(auth.UserKey, "alice", auth.ThreadKey, "t1", auth.TicketKey, "T-1"), mounts.Identity{User: "alice", Thread: "t1", Ticket: "T-1"}, true},
		{"spaces trimmed", metadata.Pairs(auth.UserKey, " alice ", auth.ThreadKey, "t1"), mounts.Identity{User: "alice", Thread: "t1"}, true},
		{"no metadata", nil, mounts.Identity{}, false},
		{"no thread", metadata.Pairs(auth.UserKey, "alice"), mounts.Identity{}, false},
		{"empty user", metadata.Pairs(auth.UserKey, "", auth.ThreadKey, "t1"), mounts.Identity{}, false},
		{"user twice", metadata.Pairs(auth.UserKey, "alice", auth.UserKey, "bob", auth.ThreadKey, "t1"), mounts.Identity{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.md != nil {
				ctx = metadata.NewIncomingContext(ctx, tc.md)
			}
			id, err := authenticateMetadata(ctx)
			if !tc.ok {
				if !errors.Is(err, auth.ErrUnauthenticated) {
					t.Errorf("err = %v, want ErrUnauthenticated", err)
				}
				return
			}
			if err != nil || id != tc.want {
				t.Errorf("Authenticate = %+v, %v; want %+v", id, err, tc.want)
			}
		})
	}
}

// authenticateMetadata is what the interceptors do for an agent call in
// insecure mode.
func authenticateMetadata(ctx context.Context) (mounts.Identity, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	p, _, err := auth.Check(ctx, auth.Metadata{}, mounts.Default(), md, "/skillsvc.v1.FilesystemService/List")
	return p.Identity, err
}

func TestContext(t *testing.T) {
	if _, ok := auth.FromContext(context.Background()); ok {
		t.Error("identity in an empty context")
	}
	if _, ok := auth.FromContext(auth.NewContext(context.Background(), auth.Principal{Identity: mounts.Identity{User: "u", Thread: "t"}})); ok {
		t.Error("identity of a principal Check did not admit")
	}
	want := mounts.Default().MustIdentify(mounts.Identity{User: "u", Thread: "t"})
	if got, ok := auth.FromContext(auth.NewContext(context.Background(), auth.Principal{Identity: want.Identity(), Caller: want})); !ok || got != want {
		t.Errorf("FromContext = %+v, %v", got, ok)
	}
}

// TestCheckIdentifies: Check is where an agent's identity is validated, once;
// the principal it admits carries the Caller handlers pass down, and one it
// refuses for a malformed ID is still returned for the audit trail.
func TestCheckIdentifies(t *testing.T) {
	const method = "/skillsvc.v1.FilesystemService/List"
	for _, tc := range []struct {
		name    string
		md      metadata.MD
		wantErr error
		ok      bool
	}{
		{"valid", metadata.Pairs(auth.UserKey, "alice", auth.ThreadKey, "t1", auth.TicketKey, "T-1"), nil, true},
		{"malformed user", metadata.Pairs(auth.UserKey, "../bob", auth.ThreadKey, "t1"), mounts.ErrInvalidID, true},
		{"malformed ticket", metadata.Pairs(auth.UserKey, "alice", auth.ThreadKey, "t1", auth.TicketKey, "a/b"), mounts.ErrInvalidID, true},
		{"no thread", metadata.Pairs(auth.UserKey, "alice"), auth.ErrUnauthenticated, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, ok, err := auth.Check(context.Background(), auth.Metadata{}, mounts.Default(), tc.md, method)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) || ok != tc.ok {
				t.Fatalf("Check = %+v, %v, %v; want ok %v, error %v", p, ok, err, tc.ok, tc.wantErr)
			}
			if err != nil {
				if p.Caller != (mounts.Caller{}) {
					t.Errorf("refused principal carries a Caller: %+v", p.Caller)
				}
				return
			}
			want := mounts.Identity{User: "alice", Thread: "t1", Ticket: "T-1"}
			if p.Caller.Identity() != want || mounts.Default().Identified(p.Caller) != nil {
				t.Errorf("Caller = %+v, want %+v identified by the table", p.Caller.Identity(), want)
			}
		})
	}
}
