package s3

import (
	"context"
	"net"
	"net/url"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
)

// StoreEndpoint is the S3 service c's client reaches, spelled one way for
// every spelling of it, so that replicas of one deployment agree on what
// they share (the cache's keyspace) however each was configured:
//   - AWS itself, whatever the endpoint (empty, the region's as the SDK
//     resolves it, the legacy global one, dual-stack or FIPS, any port,
//     path-style or virtual-hosted): "" for the aws partition, where a
//     bucket name is unique, else the partition ("aws-cn", "aws-us-gov");
//   - another server: scheme://host[:port][/path], scheme and host in lower
//     case, the scheme's default port and trailing slashes left out.
//
// The endpoint is the one the client New builds resolves: c.Endpoint, else
// what the SDK takes from the environment (AWS_ENDPOINT_URL_S3,
// AWS_ENDPOINT_URL) or the shared config file (endpoint_url), else the
// SDK's endpoint rules for c.Region, without a network call. Path-style and
// virtual-hosted addressing reach one bucket: c.PathStyle does not change
// the answer. The error is the SDK's, loading its configuration.
func (c Config) StoreEndpoint(ctx context.Context) (string, error) {
	client, err := c.client(ctx)
	if err != nil {
		return "", err
	}
	var endpoint string
	if e := client.Options().BaseEndpoint; e != nil {
		endpoint = *e
	}
	if endpoint == "" {
		e, err := awss3.NewDefaultEndpointResolverV2().ResolveEndpoint(ctx, awss3.EndpointParameters{
			Region: aws.String(c.Region), Bucket: aws.String(c.Bucket), ForcePathStyle: aws.Bool(true),
		})
		if err != nil {
			return "", nil // AWS, whose rules refuse the region: the start will say so
		}
		endpoint = e.URI.Scheme + "://" + e.URI.Host
	}
	u, err := url.Parse(strings.TrimRight(endpoint, "/"))
	if err != nil || u.Host == "" {
		return strings.TrimRight(endpoint, "/"), nil
	}
	scheme, host, port := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname()), u.Port()
	if p, ok := awsPartition(host); ok {
		return p, nil
	}
	if port == map[string]string{"http": "80", "https": "443"}[scheme] {
		port = ""
	}
	if port != "" {
		host = net.JoinHostPort(host, port)
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]" // IPv6
	}
	return scheme + "://" + host + strings.TrimRight(u.EscapedPath(), "/"), nil
}

// awsPartition says whether host is AWS's, and which partition's bucket
// namespace it serves ("" for aws).
func awsPartition(host string) (string, bool) {
	switch {
	case strings.HasSuffix(host, ".amazonaws.com.cn"):
		return "aws-cn", true
	case strings.HasSuffix(host, ".amazonaws.com") && strings.Contains(host, "us-gov-"):
		return "aws-us-gov", true
	case strings.HasSuffix(host, ".amazonaws.com"):
		return "", true
	}
	return "", false
}
