package doctest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/skillsvc/skillsvc/internal/testserver"
)

// The fixed addresses and credentials of the contract: a page's examples
// name them, as a reader's laptop would have them.
const (
	minioAddr        = "127.0.0.1:9000"
	minioConsoleAddr = "127.0.0.1:9001"
	minioUser        = "minioadmin"
	minioPassword    = "minioadmin"
	minioRegion      = "us-east-1"
	minioBucket      = "skillsvc"
	redisAddr        = "127.0.0.1:6379"
	// skillsvc's defaults (--listen, --http.listen).
	serverGRPCAddr = "127.0.0.1:7070"
	serverHTTPAddr = "127.0.0.1:7080"

	pollInterval = 50 * time.Millisecond
)

// startMinIO starts MinIO ($SKILLSVC_MINIO_BIN, .tools/bin/minio or PATH)
// and creates the bucket.
func (pg *page) startMinIO(ctx context.Context) error {
	bin := os.Getenv("SKILLSVC_MINIO_BIN")
	if bin == "" {
		var err error
		if bin, err = lookPath("minio", pg.env); err != nil {
			return fmt.Errorf("%w (make tools installs it)", err)
		}
	}
	if err := portsFree(minioAddr, minioConsoleAddr); err != nil {
		return err
	}
	data := filepath.Join(pg.work, "minio")
	env := append(pg.env[:len(pg.env):len(pg.env)],
		"MINIO_ROOT_USER="+minioUser, "MINIO_ROOT_PASSWORD="+minioPassword,
		"MINIO_BROWSER=off", "MINIO_UPDATE=off")
	p, err := startProc(pg.work, env, filepath.Join(pg.work, "minio.out"), bin, "server", filepath.Join(data, "data"),
		"--address", minioAddr, "--console-address", minioConsoleAddr,
		"--certs-dir", filepath.Join(data, "certs"), "--quiet")
	if err != nil {
		return err
	}
	pg.stops = append(pg.stops, p.kill)
	pg.contexts = append(pg.contexts, func() string { return "--- minio output\n" + p.tail(contextLines) + "\n" })
	if err := waitHTTP(ctx, "http://"+minioAddr+"/minio/health/ready", p, pg.r.Timeout); err != nil {
		return err
	}
	client := (&testserver.MinIO{Endpoint: "http://" + minioAddr, AccessKey: minioUser, SecretKey: minioPassword, Region: minioRegion}).S3()
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(minioBucket)}); err != nil {
		return fmt.Errorf("creating bucket %s: %w", minioBucket, err)
	}
	return nil
}

// startRedis starts redis-server from PATH, without persistence.
func (pg *page) startRedis(ctx context.Context) error {
	bin, err := lookPath("redis-server", pg.env)
	if err != nil {
		return fmt.Errorf("%w (make tools installs it)", err)
	}
	if err := portsFree(redisAddr); err != nil {
		return err
	}
	host, port, _ := net.SplitHostPort(redisAddr)
	p, err := startProc(pg.work, pg.env, filepath.Join(pg.work, "redis.out"), bin,
		"--bind", host, "--port", port, "--save", "", "--appendonly", "no", "--dir", pg.work)
	if err != nil {
		return err
	}
	pg.stops = append(pg.stops, p.kill)
	pg.contexts = append(pg.contexts, func() string { return "--- redis-server output\n" + p.tail(contextLines) + "\n" })
	return waitReady(ctx, p, pg.r.Timeout, "redis-server at "+redisAddr, func() error {
		c, err := net.DialTimeout("tcp", redisAddr, time.Second)
		if err != nil {
			return err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(time.Second))
		if _, err := c.Write([]byte("PING\r\n")); err != nil {
			return err
		}
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			return err
		}
		if !strings.HasPrefix(line, "+PONG") {
			return fmt.Errorf("PING answered %q", strings.TrimSpace(line))
		}
		return nil
	})
}

// startServer starts bin/skillsvc with its defaults in the page's directory
// (its data in ./data there) and waits until its health service says SERVING.
func (pg *page) startServer(ctx context.Context) error {
	if err := portsFree(serverGRPCAddr, serverHTTPAddr); err != nil {
		return err
	}
	s, err := testserver.RunSkillsvc(ctx, testserver.SkillsvcConfig{
		Bin:  filepath.Join(pg.r.Root, "bin", "skillsvc"),
		Env:  pg.env,
		Dir:  pg.dir,
		Wait: []string{"serving http"},
	}, pg.r.Timeout)
	if err != nil {
		return err
	}
	pg.stops = append(pg.stops, s.Stop)
	pg.contexts = append(pg.contexts, func() string { return "--- skillsvc log\n" + tailLines(s.Tail(), contextLines) + "\n" })
	return nil
}

// portsFree fails when something already listens on a fixed address, which
// a page's server would otherwise mistake for its own.
func portsFree(addrs ...string) error {
	for _, a := range addrs {
		if c, err := net.DialTimeout("tcp", a, time.Second); err == nil {
			c.Close()
			return fmt.Errorf("%s is already in use: stop what listens there (the page's examples need it)", a)
		}
	}
	return nil
}

// waitTCP waits until addr accepts connections.
func waitTCP(ctx context.Context, addr string, p *proc, timeout time.Duration) error {
	return waitReady(ctx, p, timeout, addr, func() error {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err
	})
}

// waitHTTP waits until url answers 200.
func waitHTTP(ctx context.Context, url string, p *proc, timeout time.Duration) error {
	client := &http.Client{Timeout: time.Second}
	return waitReady(ctx, p, timeout, url, func() error {
		resp, err := client.Get(url)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return errors.New(resp.Status)
		}
		return nil
	})
}

// waitReady polls probe until it succeeds, failing when p exits first or
// the timeout passes.
func waitReady(ctx context.Context, p *proc, timeout time.Duration, what string, probe func() error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		err := probe()
		if err == nil {
			return nil
		}
		if p.exited() {
			return fmt.Errorf("%s: the process exited (%v) before it was ready; its output:\n%s", what, p.cmd.ProcessState, p.tail(contextLines))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %v: %v", what, timeout, err)
		case <-tick.C:
		}
	}
}

// lookPath finds name on the PATH of env (the blocks' PATH, which starts
// with the repository's bin/ and .tools/bin).
func lookPath(name string, env []string) (string, error) {
	for _, kv := range env {
		if path, ok := strings.CutPrefix(kv, "PATH="); ok {
			for _, dir := range filepath.SplitList(path) {
				p := filepath.Join(dir, name)
				if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
					return p, nil
				}
			}
		}
	}
	return "", fmt.Errorf("%s not found on PATH", name)
}
