package s3_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/objstore/s3"
)

// TestStoreEndpoint: every spelling of one S3 service is one endpoint (the
// cache keyspace of replicas that spell it differently is one); another
// service, port, path or partition is another.
func TestStoreEndpoint(t *testing.T) {
	noAWSEnv(t)
	cfg := func(endpoint, region string, pathStyle bool) s3.Config {
		return s3.Config{Endpoint: endpoint, Region: region, Bucket: "skills", PathStyle: pathStyle}
	}
	for _, tc := range []struct {
		name string
		cfgs []s3.Config
		want string
	}{
		{"minio: case, trailing slash, default port absent", []s3.Config{
			cfg("http://minio:9000", "us-east-1", true), cfg("http://MINIO:9000/", "us-east-1", true), cfg("HTTP://MinIO:9000//", "us-east-1", true),
		}, "http://minio:9000"},
		{"path-style or virtual-hosted", []s3.Config{
			cfg("http://minio:9000", "us-east-1", true), cfg("http://minio:9000", "us-east-1", false),
		}, "http://minio:9000"},
		{"default ports", []s3.Config{
			cfg("https://storage.example.com", "us-east-1", true), cfg("https://storage.example.com:443", "us-east-1", true), cfg("https://Storage.Example.com:443/", "us-east-1", true),
		}, "https://storage.example.com"},
		{"http's default port", []s3.Config{cfg("http://minio:80", "us-east-1", true), cfg("http://minio", "us-east-1", true)}, "http://minio"},
		{"ipv6", []s3.Config{cfg("http://[::1]:9000", "us-east-1", true), cfg("http://[::1]:9000/", "us-east-1", true)}, "http://[::1]:9000"},
		{"ipv6, default port", []s3.Config{cfg("https://[::1]:443", "us-east-1", true), cfg("https://[::1]", "us-east-1", true)}, "https://[::1]"},
		{"a path is kept, its case too", []s3.Config{cfg("https://gw.example.com/s3/", "us-east-1", true)}, "https://gw.example.com/s3"},
		{"AWS: empty, regional, global, any port, either addressing", []s3.Config{
			cfg("", "us-east-1", false), cfg("", "eu-west-1", true), cfg("https://s3.amazonaws.com", "us-east-1", false),
			cfg("https://s3.amazonaws.com:443", "us-east-1", false), cfg("https://s3.eu-west-1.amazonaws.com/", "eu-west-1", true),
			cfg("https://S3.dualstack.eu-west-1.amazonaws.com", "eu-west-1", false),
		}, ""},
		{"AWS China", []s3.Config{cfg("", "cn-north-1", false), cfg("https://s3.cn-north-1.amazonaws.com.cn", "cn-north-1", true)}, "aws-cn"},
		{"AWS GovCloud", []s3.Config{cfg("", "us-gov-west-1", false), cfg("https://s3-fips.us-gov-west-1.amazonaws.com", "us-gov-west-1", false)}, "aws-us-gov"},
		{"another port", []s3.Config{cfg("http://minio:9001", "us-east-1", true)}, "http://minio:9001"},
		{"another scheme", []s3.Config{cfg("https://minio:9000", "us-east-1", true)}, "https://minio:9000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range tc.cfgs {
				if got, err := c.StoreEndpoint(t.Context()); err != nil || got != tc.want {
					t.Errorf("%q in %s (path-style %v) = %q, %v; want %q", c.Endpoint, c.Region, c.PathStyle, got, err, tc.want)
				}
			}
		})
	}
}

// noAWSEnv gives the test an SDK environment of its own: no endpoint
// variables and empty config files, whatever the developer's are.
func noAWSEnv(t *testing.T) {
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "AWS_") {
			t.Setenv(k, "")
			os.Unsetenv(k) // restored by t.Setenv's cleanup
		}
	}
	t.Setenv("AWS_CONFIG_FILE", os.DevNull)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
}

// TestStoreEndpointFromSDK: the endpoint is the one the client resolves,
// not only the flag: AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL and the shared
// config file's endpoint_url (its s3 service section first) name the
// store as the flag would, normalized alike, in the SDK's order of
// precedence; AWS_IGNORE_CONFIGURED_ENDPOINT_URLS leaves AWS. Before,
// replicas configured this way computed AWS's keyspace, and two
// deployments on two stores named by their environment shared one.
func TestStoreEndpointFromSDK(t *testing.T) {
	const profile = "[default]\nendpoint_url = http://Shared:9000/\nservices = store\n\n[services store]\ns3 =\n  endpoint_url = http://shared-s3:9000\n"
	for _, tc := range []struct {
		name     string
		endpoint string // the flag
		env      map[string]string
		config   string // the shared config file
		want     string
	}{
		{name: "AWS_ENDPOINT_URL_S3", env: map[string]string{"AWS_ENDPOINT_URL_S3": "HTTP://MinIO:9000/"}, want: "http://minio:9000"},
		{name: "AWS_ENDPOINT_URL", env: map[string]string{"AWS_ENDPOINT_URL": "http://minio:9000"}, want: "http://minio:9000"},
		{name: "the service's variable before the global one", env: map[string]string{"AWS_ENDPOINT_URL": "http://other:9000", "AWS_ENDPOINT_URL_S3": "http://minio:9000"}, want: "http://minio:9000"},
		{name: "another store by the environment", env: map[string]string{"AWS_ENDPOINT_URL_S3": "http://minio2:9000"}, want: "http://minio2:9000"},
		{name: "the flag before the environment", endpoint: "http://minio:9000", env: map[string]string{"AWS_ENDPOINT_URL_S3": "http://other:9000"}, want: "http://minio:9000"},
		{name: "shared config endpoint_url", config: "[default]\nendpoint_url = http://Shared:9000/\n", want: "http://shared:9000"},
		{name: "shared config s3 service section", config: profile, want: "http://shared-s3:9000"},
		{name: "the environment before the shared config", env: map[string]string{"AWS_ENDPOINT_URL_S3": "http://minio:9000"}, config: profile, want: "http://minio:9000"},
		{name: "AWS by the environment", env: map[string]string{"AWS_ENDPOINT_URL_S3": "https://s3.eu-west-1.amazonaws.com"}, want: ""},
		{name: "configured endpoints ignored", env: map[string]string{"AWS_ENDPOINT_URL_S3": "http://minio:9000", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": "true"}, want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			noAWSEnv(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			if tc.config != "" {
				file := filepath.Join(t.TempDir(), "config")
				if err := os.WriteFile(file, []byte(tc.config), 0o600); err != nil {
					t.Fatal(err)
				}
				t.Setenv("AWS_CONFIG_FILE", file)
			}
			c := s3.Config{Endpoint: tc.endpoint, Region: "us-east-1", Bucket: "skills", PathStyle: true}
			if got, err := c.StoreEndpoint(t.Context()); err != nil || got != tc.want {
				t.Fatalf("StoreEndpoint = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
