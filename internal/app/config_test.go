package app

import (
	"flag"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/skills"
)

func TestConfigSources(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		args    []string
		want    func(Config) bool
		wantErr bool
	}{
		{"defaults", nil, nil, func(c Config) bool {
			return c.Listen == "127.0.0.1:7070" && c.Storage == "local" && c.DataDir == "./data" && c.VFS.MaxListPage == 1000
		}, false},
		{"env sets flags", map[string]string{"SKILLSVC_STORAGE": "s3", "SKILLSVC_S3_BUCKET": "b", "SKILLSVC_S3_PATH_STYLE": "true", "SKILLSVC_VFS_MAX_READ_BYTES": "5"}, nil, func(c Config) bool {
			return c.Storage == "s3" && c.S3.Bucket == "b" && c.S3.PathStyle && c.VFS.MaxReadBytes == 5
		}, false},
		{"flags beat env", map[string]string{"SKILLSVC_LISTEN": "0.0.0.0:1"}, []string{"--listen=127.0.0.1:2"}, func(c Config) bool {
			return c.Listen == "127.0.0.1:2"
		}, false},
		{"custom mounts", nil, []string{"--mounts=/workspace=threads/{thread}/:rw,/ticket=tickets/{ticket}/:rw,/skills={user}/skills/:ro"}, func(c Config) bool { return true }, false},
		{"s3 needs bucket", nil, []string{"--storage=s3"}, nil, true},
		{"unknown storage", nil, []string{"--storage=ftp"}, nil, true},
		{"bad mounts", nil, []string{"--mounts=/w={nope}/:rw"}, nil, true},
		{"bad limit", nil, []string{"--vfs.max-list-page=0"}, nil, true},
		{"bad env value", map[string]string{"SKILLSVC_VFS_MAX_READ_BYTES": "lots"}, nil, nil, true},
		{"tool names from env and flags", map[string]string{"SKILLSVC_SKILLS_SEARCH_TOOL": "search_skills"}, []string{"--skills.download-tool=download_file"}, func(c Config) bool {
			return c.Skills.SearchTool == "search_skills" && c.Skills.DownloadTool == "download_file"
		}, false},
		{"tool name that is no name", nil, []string{"--skills.search-tool=search skills"}, nil, true},
		{"redis from env", map[string]string{"SKILLSVC_CACHE_REDIS_ADDRS": "r1:6379,r2:6379", "SKILLSVC_CACHE_LRU_MAX_BYTES": "1024"}, nil, func(c Config) bool {
			return len(c.Cache.Redis.Addrs) == 2 && c.Cache.Redis.Addrs[1] == "r2:6379" && c.Cache.LRU.MaxBytes == 1024
		}, false},
		{"redis address without port", nil, []string{"--cache.redis.addrs=redis"}, nil, true},
		{"redis key prefix with a hash tag", nil, []string{"--cache.redis.addrs=redis:6379", "--cache.redis.key-prefix={x}"}, nil, true},
		{"head ttl must be positive", nil, []string{"--skills.head-ttl=0s"}, nil, true},
		{"semantic search off by default", nil, nil, func(c Config) bool {
			return !c.Embeddings.Enabled() && c.Embeddings.URL == ""
		}, false},
		{"semantic search from env and flags", map[string]string{"SKILLSVC_SEARCH_EMBEDDINGS_URL": "http://embed:8080"}, []string{"--search.embeddings.model=all-MiniLM-L6-v2", "--search.embeddings.weight=0.3"}, func(c Config) bool {
			return c.Embeddings.Enabled() && c.Embeddings.Model == "all-MiniLM-L6-v2" && c.Embeddings.Weight == 0.3
		}, false},
		{"semantic search needs a model", nil, []string{"--search.embeddings.url=http://embed:8080"}, nil, true},
		{"semantic weight within 0..1", nil, []string{"--search.embeddings.url=http://embed:8080", "--search.embeddings.model=m", "--search.embeddings.weight=1.5"}, nil, true},
		{"auth defaults to insecure", nil, nil, func(c Config) bool {
			return c.Auth.Mode == "insecure" && c.Auth.JWT.Leeway == 30*time.Second && c.Auth.JWT.UserClaim == "user"
		}, false},
		{"jwt from env", map[string]string{"SKILLSVC_AUTH_MODE": "jwt", "SKILLSVC_AUTH_JWT_SECRET_FILE": "/run/secret"}, []string{"--auth.jwt.audience=skillsvc"}, func(c Config) bool {
			return c.Auth.Mode == "jwt" && c.Auth.JWT.SecretFile == "/run/secret" && c.Auth.JWT.Audience == "skillsvc"
		}, false},
		{"jwt needs a key", nil, []string{"--auth.mode=jwt"}, nil, true},
		{"local storage lists its libraries afresh after a second", nil, nil, func(c Config) bool {
			return c.Skills.IndexRefresh == skills.LocalIndexRefresh && c.Skills.IndexMaxStale == skills.LocalIndexRefresh
		}, false},
		{"s3 keeps the flags' freshness defaults", nil, []string{"--storage=s3", "--s3.bucket=b"}, func(c Config) bool {
			return c.Skills.IndexRefresh == 5*time.Second && c.Skills.IndexMaxStale == 30*time.Second
		}, false},
		{"local freshness as set", map[string]string{"SKILLSVC_SKILLS_INDEX_REFRESH": "10s"}, nil, func(c Config) bool {
			return c.Skills.IndexRefresh == 10*time.Second && c.Skills.IndexMaxStale == 10*time.Second
		}, false},
		{"local max stale set below a second", nil, []string{"--skills.index-max-stale=200ms"}, func(c Config) bool {
			return c.Skills.IndexRefresh == 200*time.Millisecond && c.Skills.IndexMaxStale == 200*time.Millisecond
		}, false},
		{"examples default", nil, nil, func(c Config) bool { return c.Examples == ExamplesAuto }, false},
		{"examples from env", map[string]string{"SKILLSVC_EXAMPLES": "if-empty"}, nil, func(c Config) bool { return c.Examples == ExamplesIfEmpty }, false},
		{"unknown examples mode", nil, []string{"--examples=yes"}, nil, true},
		{"unknown auth mode", nil, []string{"--auth.mode=trust"}, nil, true},
		{"events off by default", nil, nil, func(c Config) bool { return !c.Events.Enabled() && c.Events.Path == "/events/s3" }, false},
		{"events from env", map[string]string{"SKILLSVC_EVENTS_WEBHOOK_TOKEN_FILE": "/run/token"}, []string{"--storage=s3", "--s3.bucket=b", "--events.path=/hooks/minio"}, func(c Config) bool {
			return c.Events.Enabled() && c.Events.WebhookTokenFile == "/run/token" && c.Events.Path == "/hooks/minio"
		}, false},
		{"events need s3", nil, []string{"--events.webhook-token-file=/run/token"}, nil, true},
		{"events need the http listener", nil, []string{"--storage=s3", "--s3.bucket=b", "--events.webhook-token-file=/run/token", "--http.listen="}, nil, true},
		{"events must not shadow mcp", nil, []string{"--storage=s3", "--s3.bucket=b", "--events.webhook-token-file=/run/token", "--events.path=/mcp"}, nil, true},
		{"events must not shadow the json api", nil, []string{"--storage=s3", "--s3.bucket=b", "--events.webhook-token-file=/run/token", "--events.path=/skillsvc.v1.AdminService/x"}, nil, true},
		{"sqs alone, without the http listener", nil, []string{"--storage=s3", "--s3.bucket=b", "--events.sqs.queue-url=https://sqs.eu-west-1.amazonaws.com/123456789012/skills", "--http.listen="}, func(c Config) bool {
			return c.Events.Enabled() && !c.Events.Webhook() && c.Events.SQS.WaitTime == 20*time.Second && c.Events.SQS.MaxMessages == 10
		}, false},
		{"sqs needs s3", nil, []string{"--events.sqs.queue-url=https://sqs.eu-west-1.amazonaws.com/123456789012/skills"}, nil, true},
		{"sqs queue url must be a url", nil, []string{"--storage=s3", "--s3.bucket=b", "--events.sqs.queue-url=skills"}, nil, true},
		{"sqs wait over 20s", nil, []string{"--storage=s3", "--s3.bucket=b", "--events.sqs.queue-url=https://sqs.eu-west-1.amazonaws.com/1/q", "--events.sqs.wait-time=30s"}, nil, true},
		{"sqs visibility shorter than an apply", nil, []string{"--storage=s3", "--s3.bucket=b", "--events.sqs.queue-url=https://sqs.eu-west-1.amazonaws.com/1/q", "--events.sqs.visibility-timeout=10s"}, nil, true},
		{"s3 freshness without events", nil, []string{"--storage=s3", "--s3.bucket=b"}, func(c Config) bool {
			return c.Skills.IndexRefresh == 5*time.Second && c.Skills.IndexMaxStale == 30*time.Second
		}, false},
		{"events lengthen polling", nil, []string{"--storage=s3", "--s3.bucket=b", "--events.sqs.queue-url=https://sqs.eu-west-1.amazonaws.com/1/q"}, func(c Config) bool {
			return c.Skills.IndexRefresh == skills.EventsIndexRefresh && c.Skills.IndexMaxStale == skills.EventsIndexMaxStale
		}, false},
		{"events with polling as set", map[string]string{"SKILLSVC_EVENTS_WEBHOOK_TOKEN_FILE": "/run/token"}, []string{"--storage=s3", "--s3.bucket=b", "--skills.index-refresh=5s"}, func(c Config) bool {
			return c.Skills.IndexRefresh == 5*time.Second && c.Skills.IndexMaxStale == skills.EventsIndexMaxStale
		}, false},
		{"events with max stale set", nil, []string{"--storage=s3", "--s3.bucket=b", "--events.webhook-token-file=/run/token", "--skills.index-max-stale=20s"}, func(c Config) bool {
			return c.Skills.IndexRefresh == 20*time.Second && c.Skills.IndexMaxStale == 20*time.Second
		}, false},
		{"events path must be a path", nil, []string{"--storage=s3", "--s3.bucket=b", "--events.webhook-token-file=/run/token", "--events.path=events"}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c Config
			f := flag.NewFlagSet("test", flag.ContinueOnError)
			c.RegisterFlags(f)
			err := parse(&c, f, tc.args, func(k string) string { return tc.env[k] })
			if err == nil {
				err = c.Validate()
			}
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if err == nil && !tc.want(c) {
				t.Errorf("config %+v not as expected", c)
			}
		})
	}
}
