package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/skillsvc/skillsvc/internal/loadbench"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

const (
	// skillsPerCategory sets the number of cat-NN folders: 20 for 1,000
	// skills, as in BenchmarkListSkills1000.
	skillsPerCategory = 50
	skillMDSize       = 3 << 10
	guideSize         = 1536
	// guideFile is the one disclosure file of every seeded skill.
	guideFile = "references/guide.md"
)

// The persisted catalog indexes skillsvc keeps in the bucket; a "no index
// anywhere" case deletes them.
const (
	userIndexKey   = "%s/settings/skills.index"
	sharedIndexKey = "_shared/settings/skills.index"
	// sharedPrefix is where skillsvc's defaults put the shared library.
	sharedPrefix = "_shared/skills/"
)

// newS3Client returns a client for endpoint with the MinIO credentials,
// built from explicit options so no AWS environment or profile changes what
// it talks to, with a connection pool big enough for conns parallel calls.
func newS3Client(m *testserver.MinIO, endpoint string, conns int) *s3.Client {
	return s3.New(s3.Options{
		BaseEndpoint:               aws.String(endpoint),
		UsePathStyle:               true,
		Region:                     m.Region,
		Credentials:                credentials.NewStaticCredentialsProvider(m.AccessKey, m.SecretKey, ""),
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
		HTTPClient: &http.Client{Transport: &http.Transport{
			Proxy:               nil,
			MaxIdleConns:        conns,
			MaxIdleConnsPerHost: conns,
			IdleConnTimeout:     time.Minute,
		}},
	})
}

func createBucket(ctx context.Context, c *s3.Client, bucket string) error {
	_, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)})
	return err
}

// skillsPrefix is where the default mount table puts a user's library.
func skillsPrefix(user string) string { return user + "/skills/" }

func skillName(i int) string { return fmt.Sprintf("skill-%04d", i) }

// skillFolder spreads a library's skills evenly over its categories.
func skillFolder(i, size int) string {
	categories := max(1, (size+skillsPerCategory-1)/skillsPerCategory)
	return fmt.Sprintf("cat-%02d/%s", i%categories, skillName(i))
}

var topics = []string{
	"PDF form filling", "CSV cleaning", "release notes", "SQL migrations", "incident reports",
	"API changelogs", "invoice extraction", "unit test scaffolding", "Terraform reviews", "meeting minutes",
	"log triage", "dependency upgrades", "data dictionaries", "chart styling", "contract redlines",
}

// skillMD is a SKILL.md of about 3 KiB: the frontmatter an Agent Skills
// library has (name, description, license, metadata), then markdown steps.
func skillMD(i, size int) []byte {
	return namedSkillMD(skillName(i), i, strings.Split(skillFolder(i, size), "/")[0])
}

// namedSkillMD is skillMD of a skill named name in category, its text
// chosen by i.
func namedSkillMD(name string, i int, category string) []byte {
	topic := topics[i%len(topics)]
	var b bytes.Buffer
	fmt.Fprintf(&b, "---\nname: %s\n", name)
	fmt.Fprintf(&b, "description: Handles %s for team %d. Use when the user asks about %s, needs a checklist "+
		"for it, or wants an existing draft reviewed against the house conventions.\n", topic, i%37, strings.ToLower(topic))
	b.WriteString("license: Apache-2.0\n")
	fmt.Fprintf(&b, "metadata:\n  author: bench-load\n  version: \"1.%d\"\n  category: %s\n---\n", i%10, category)
	fmt.Fprintf(&b, "# %s (%s)\n\n## When to use\n\nPick this skill for %s. It assumes the files are in the workspace "+
		"and that the user wants a result they can paste into a ticket.\n\n## Steps\n\n", topic, name, strings.ToLower(topic))
	for step := 1; b.Len() < skillMDSize-200; step++ {
		fmt.Fprintf(&b, "%d. Read the input for step %d of %s, note anything unusual in a short list, and keep "+
			"the original wording where the user wrote it; do not invent values that are not there.\n", step, step, strings.ToLower(topic))
	}
	b.WriteString("\n## References\n\nSee references/guide.md for the conventions. Arguments: $ARGUMENTS\n")
	return b.Bytes()
}

// guideMD is the skill's one reference file, about 1.5 KiB.
func guideMD(name string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Guide for %s\n\n", name)
	for line := 1; b.Len() < guideSize; line++ {
		fmt.Fprintf(&b, "- Convention %d: prefer short sentences, name the file you changed, and link the ticket.\n", line)
	}
	return b.Bytes()
}

// seedLibraries uploads a library of size skills (SKILL.md and the guide)
// for every user, with workers uploads in flight.
func seedLibraries(ctx context.Context, c *s3.Client, bucket string, users []string, size, workers int) error {
	return putObjects(ctx, c, bucket, workers, func(yield func(string, []byte) bool) {
		for _, user := range users {
			for i := range size {
				base := skillsPrefix(user) + skillFolder(i, size) + "/"
				if !yield(base+"SKILL.md", skillMD(i, size)) || !yield(base+guideFile, guideMD(skillName(i))) {
					return
				}
			}
		}
	})
}

// putObjects uploads every object (key, body) of objects, with workers
// uploads in flight, and stops at the first failure.
func putObjects(ctx context.Context, c *s3.Client, bucket string, workers int, objects iter.Seq2[string, []byte]) error {
	type object struct {
		key  string
		body []byte
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	queue := make(chan object)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for o := range queue {
				_, err := c.PutObject(ctx, &s3.PutObjectInput{
					Bucket: aws.String(bucket), Key: aws.String(o.key), Body: bytes.NewReader(o.body),
				})
				if err != nil {
					cancel(fmt.Errorf("put %s: %w", o.key, err))
				}
			}
		})
	}
	func() {
		defer close(queue)
		for key, body := range objects {
			select {
			case queue <- object{key, body}:
			case <-ctx.Done():
				return
			}
		}
	}()
	wg.Wait()
	return context.Cause(ctx)
}

func indexKeys(users []string) []string {
	keys := []string{sharedIndexKey}
	for _, u := range users {
		keys = append(keys, fmt.Sprintf(userIndexKey, u))
	}
	return keys
}

// deleteIndexes removes the persisted catalog indexes of users and of the
// shared library; deleting a missing object succeeds on S3.
func deleteIndexes(ctx context.Context, c *s3.Client, bucket string, users []string) error {
	for _, key := range indexKeys(users) {
		if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}); err != nil {
			return fmt.Errorf("delete %s: %w", key, err)
		}
	}
	return nil
}

// indexState says which persisted indexes exist, for the notes under the
// table: a "persisted index" case means little when there is none.
func indexState(ctx context.Context, c *s3.Client, bucket string, users []string) string {
	var parts []string
	for _, key := range indexKeys(users) {
		out, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		var notFound *types.NotFound
		var apiErr smithy.APIError
		switch {
		case err == nil:
			parts = append(parts, fmt.Sprintf("%s %s", key, loadbench.Bytes(aws.ToInt64(out.ContentLength))))
		case errors.As(err, &notFound) || (errors.As(err, &apiErr) && apiErr.ErrorCode() == "NotFound"):
			parts = append(parts, key+" absent")
		default:
			parts = append(parts, fmt.Sprintf("%s: %v", key, err))
		}
	}
	return strings.Join(parts, ", ")
}
