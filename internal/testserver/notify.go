package testserver

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// WebhookEnv is the MinIO environment that defines the webhook notification
// target id, posting each event to endpoint with token in its Authorization
// header (MinIO sends "Bearer <token>" for a one-word token). Give it to
// StartMinIO, then point a bucket at the target with NotifyWebhook. MinIO
// connects lazily, so endpoint need not be up yet.
func WebhookEnv(id, endpoint, token string) []string {
	return []string{
		"MINIO_NOTIFY_WEBHOOK_ENABLE_" + id + "=on",
		"MINIO_NOTIFY_WEBHOOK_ENDPOINT_" + id + "=" + endpoint,
		"MINIO_NOTIFY_WEBHOOK_AUTH_TOKEN_" + id + "=" + token,
	}
}

// NotifyWebhook makes MinIO send bucket's object-created and
// object-removed events to the webhook target id (WebhookEnv), through the
// S3 API's PutBucketNotificationConfiguration, as an operator would with
// `mc event add` or the AWS CLI.
func (m *MinIO) NotifyWebhook(t testing.TB, bucket, id string) {
	t.Helper()
	_, err := m.Client(t).PutBucketNotificationConfiguration(t.Context(), &s3.PutBucketNotificationConfigurationInput{
		Bucket: aws.String(bucket),
		NotificationConfiguration: &types.NotificationConfiguration{
			QueueConfigurations: []types.QueueConfiguration{{
				QueueArn: aws.String("arn:minio:sqs::" + id + ":webhook"),
				Events:   []types.Event{"s3:ObjectCreated:*", "s3:ObjectRemoved:*"},
			}},
		},
	})
	if err != nil {
		t.Fatalf("testserver: bucket notification for %q to webhook %q: %v", bucket, id, err)
	}
}
