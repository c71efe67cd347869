package app_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/fullstorydev/grpchan/inprocgrpc"
	channelzpb "google.golang.org/grpc/channelz/grpc_channelz_v1"
	channelz "google.golang.org/grpc/channelz/service" // its import turns channelz on: every grpc.Server registers

	"github.com/skillsvc/skillsvc/internal/app"
	"github.com/skillsvc/skillsvc/internal/logtest"
)

// liveServers returns the IDs of the gRPC servers alive in this process,
// as channelz counts them (asked in process: the question starts none).
func liveServers(t *testing.T) map[int64]bool {
	t.Helper()
	ch := new(inprocgrpc.Channel)
	channelz.RegisterChannelzServiceToServer(ch)
	ids := map[int64]bool{}
	for start := int64(0); ; {
		resp, err := channelzpb.NewChannelzClient(ch).GetServers(t.Context(), &channelzpb.GetServersRequest{StartServerId: start})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range resp.GetServer() {
			ids[s.GetRef().GetServerId()] = true
			start = s.GetRef().GetServerId() + 1
		}
		if resp.GetEnd() {
			return ids
		}
	}
}

// TestOneGRPCServer: the process runs one gRPC server, its HTTP endpoints
// included: the JSON gateway and MCP call the services in process
// (server.InProcess), not through loopback servers of their own, and a
// JSON call is answered.
func TestOneGRPCServer(t *testing.T) {
	cfg, err := app.Load([]string{"--data-dir=" + t.TempDir(), "--listen=127.0.0.1:0", "--http.listen=127.0.0.1:0", "--shutdown-timeout=5s"}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	before := liveServers(t)
	logs := &logtest.Buffer{}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	a, err := app.New(ctx, cfg, slog.New(slog.NewJSONHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- a.Run(ctx) }()
	defer func() { cancel(); <-ran }()
	addrs := waitListeners(t, logs, "serving http", "serving")

	var started int
	for id := range liveServers(t) {
		if !before[id] {
			started++
		}
	}
	if started != 1 {
		t.Errorf("app started %d gRPC servers, want 1", started)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://"+addrs["serving http"]+"/skillsvc.v1.SkillsService/ListSkills", strings.NewReader(`{"pageSize":1}`))
	req.Header.Set("X-Skillsvc-User", "alice")
	req.Header.Set("X-Skillsvc-Thread", "t1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Request-Id") == "" {
		t.Errorf("JSON ListSkills: %s (request ID %q) %s", resp.Status, resp.Header.Get("X-Request-Id"), body)
	}
}
