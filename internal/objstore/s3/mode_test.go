package s3_test

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/s3"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// TestModeMetadataForms: objects uploaded by other tools carry the mode in
// the forms they write (s3fs's decimal st_mode, rclone's octal st_mode,
// plain octal bits); Get, GetRange and Stat read each of them, and an
// object without the metadata has no recorded mode.
func TestModeMetadataForms(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	client := srv.Client(t)
	bucket := srv.NewBucket(t)
	b := s3.NewWithClient(client, bucket)
	for _, tc := range []struct {
		name string
		md   map[string]string
		want fs.FileMode
	}{
		{"s3fs executable", map[string]string{"mode": "33261"}, 0o755},
		{"s3fs regular", map[string]string{"mode": "33188"}, 0o644},
		{"rclone", map[string]string{"mode": "100755"}, 0o755},
		{"rclone with a leading zero", map[string]string{"mode": "0100644"}, 0o644},
		{"plain octal", map[string]string{"mode": "755"}, 0o755},
		{"plain octal with a leading zero", map[string]string{"Mode": "0755"}, 0o755},
		{"no metadata", nil, 0},
		{"garbage", map[string]string{"mode": "rwx"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := strings.ReplaceAll(tc.name, " ", "-")
			if _, err := client.PutObject(t.Context(), &awss3.PutObjectInput{Bucket: &bucket, Key: &key, Body: strings.NewReader("#!/bin/sh\n"), Metadata: tc.md}); err != nil {
				t.Fatal(err)
			}
			rc, ga, err := b.Get(t.Context(), key)
			if err != nil {
				t.Fatal(err)
			}
			rc.Close()
			rc, ra, err := b.GetRange(t.Context(), key, 2, 3)
			if err != nil {
				t.Fatal(err)
			}
			rc.Close()
			sa, err := b.Stat(t.Context(), key)
			if err != nil {
				t.Fatal(err)
			}
			if ga.Mode != tc.want || ra.Mode != tc.want || sa.Mode != tc.want {
				t.Errorf("modes Get %#o GetRange %#o Stat %#o, want %#o", ga.Mode, ra.Mode, sa.Mode, tc.want)
			}
		})
	}
	// What the backend writes is s3fs's form, so s3fs mounts see the mode.
	key := "written"
	if _, err := b.Put(t.Context(), key, strings.NewReader("x"), 1, objstore.PutOptions{Mode: 0o755}); err != nil {
		t.Fatal(err)
	}
	head, err := client.HeadObject(t.Context(), &awss3.HeadObjectInput{Bucket: &bucket, Key: aws.String(key)})
	if err != nil {
		t.Fatal(err)
	}
	if got := head.Metadata["mode"]; got != "33261" {
		t.Errorf("x-amz-meta-mode = %q, want 33261 (s3fs's 0100755)", got)
	}
}
