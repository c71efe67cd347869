package s3_test

import (
	"testing"

	"github.com/skillsvc/skillsvc/internal/objstore/s3"
)

// TestStoreEndpoint: every spelling of one S3 service is one endpoint (the
// cache keyspace of replicas that spell it differently is one); another
// service, port, path or partition is another.
func TestStoreEndpoint(t *testing.T) {
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
				if got := c.StoreEndpoint(); got != tc.want {
					t.Errorf("%q in %s (path-style %v) = %q, want %q", c.Endpoint, c.Region, c.PathStyle, got, tc.want)
				}
			}
		})
	}
}
