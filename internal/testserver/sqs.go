package testserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

const (
	sqsReadyTimeout = 30 * time.Second
	sqsBinEnv       = "SKILLSVC_MOTO_BIN"
	sqsRegion       = "us-east-1"
)

// SQS is a running SQS-compatible server: moto's server (`make tools`
// installs it from PyPI into .tools), which speaks the JSON protocol of
// aws-sdk-go-v2's SQS client.
type SQS struct {
	Endpoint string // http://127.0.0.1:PORT
	Region   string
}

// StartSQS starts an SQS-compatible server for this test; t.Cleanup stops
// it.
func StartSQS(t testing.TB) *SQS {
	t.Helper()
	Integration(t, "moto_server")
	bin, err := findBinary(sqsBinEnv, inRepoTools("moto_server"), onPath("moto_server"))
	if err != nil {
		unavailable(t, "moto_server (SQS)", sqsBinEnv, fmt.Errorf("finding moto_server: %w", err))
	}
	return startRetrying(t, "moto_server (SQS)", sqsBinEnv, func() (*SQS, *process, error) { return startSQSOnce(bin) })
}

// startRetrying starts a server by once, again on another port when it
// lost its port to another process (up to startAttempts), and stops it at
// t's cleanup.
func startRetrying[S any](t testing.TB, what, binEnv string, once func() (S, *process, error)) S {
	t.Helper()
	for attempt := 1; ; attempt++ {
		s, p, err := once()
		if err == nil {
			t.Cleanup(p.stop)
			return s
		}
		if !errors.Is(err, errPortRace) || attempt == startAttempts {
			unavailable(t, what, binEnv, err)
		}
	}
}

func startSQSOnce(bin string) (*SQS, *process, error) {
	ports, err := freePorts(1)
	if err != nil {
		return nil, nil, err
	}
	port := ports[0]
	dir, err := os.MkdirTemp("", "skillsvc-sqs-")
	if err != nil {
		return nil, nil, err
	}
	p, err := startProcess("moto_server", dir, bin, []string{"-H", "127.0.0.1", "-p", strconv.Itoa(port)}, serverEnv("AWS_"))
	if err != nil {
		return nil, nil, err
	}
	s := &SQS{Endpoint: "http://127.0.0.1:" + strconv.Itoa(port), Region: sqsRegion}
	if err := waitHTTPReady(p, s.Endpoint+"/moto-api/", port, func(code int) bool { return code == http.StatusOK }); err != nil {
		p.stop()
		return nil, nil, err
	}
	return s, p, nil
}

// waitHTTPReady polls url until its answer's status is ready, then checks
// that p owns port (another process may have won it meanwhile).
func waitHTTPReady(p *process, url string, port int, ready func(status int) bool) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(sqsReadyTimeout)
	for {
		if p.exited() {
			if isPortRace(p.out.Tail(30)) {
				return fmt.Errorf("%w: %s", errPortRace, p.exitReport())
			}
			return errors.New(p.exitReport())
		}
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if ready(resp.StatusCode) {
				break
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s at %s not ready after %v (%v); last output:\n%s", p.name, url, sqsReadyTimeout, err, p.out.Tail(30))
		}
		time.Sleep(pollInterval)
	}
	if ours, err := listensOn(p.cmd.Process.Pid, port); err != nil {
		return fmt.Errorf("checking that %s owns port %d: %w", p.name, port, err)
	} else if !ours {
		return fmt.Errorf("%w: another server answered on port %d", errPortRace, port)
	}
	return nil
}

// Client returns an SQS client of the server.
func (s *SQS) Client() *sqs.Client {
	return sqs.New(sqs.Options{
		Region:       s.Region,
		BaseEndpoint: aws.String(s.Endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
	})
}

// NewQueue creates a queue of a unique name and returns its URL.
func (s *SQS) NewQueue(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := s.Client().CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(fmt.Sprintf("skillsvc-test-%d", time.Now().UnixNano()))})
	if err != nil {
		t.Fatalf("creating an SQS queue: %v", err)
	}
	return aws.ToString(out.QueueUrl)
}
