package app_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/grpc"
	channelzpb "google.golang.org/grpc/channelz/grpc_channelz_v1"
	channelz "google.golang.org/grpc/channelz/service" // its import turns channelz on: every grpc.Server registers
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/skillsvc/skillsvc/internal/app"
	"github.com/skillsvc/skillsvc/internal/logtest"
)

// channelzClient serves channelz on a gRPC server of the test's own, made
// before anything is counted, so it is in every count.
func channelzClient(t *testing.T) channelzpb.ChannelzClient {
	t.Helper()
	s := grpc.NewServer()
	channelz.RegisterChannelzServiceToServer(s)
	lis := bufconn.Listen(1 << 20)
	go s.Serve(lis)
	t.Cleanup(s.Stop)
	conn, err := grpc.NewClient("passthrough:///channelz",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return channelzpb.NewChannelzClient(conn)
}

// liveServers returns the IDs of the gRPC servers alive in this process,
// as channelz counts them.
func liveServers(t *testing.T, cz channelzpb.ChannelzClient) map[int64]bool {
	t.Helper()
	ids := map[int64]bool{}
	for start := int64(0); ; {
		resp, err := cz.GetServers(t.Context(), &channelzpb.GetServersRequest{StartServerId: start})
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
	cz := channelzClient(t)
	before := liveServers(t, cz)
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
	for id := range liveServers(t, cz) {
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
