package cache

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// topicSpace keeps pub/sub channel names apart from values and locks.
const topicSpace = "t:"

// Topic is a Redis pub/sub channel every replica subscribes to, for
// messages all of them must see at once (a library another replica
// invalidated). Delivery is best effort: a replica whose connection drops
// misses what is published meanwhile, so a subscriber is told each time its
// subscription is established and can assume it missed what came before.
type Topic struct {
	client redis.UniversalClient
	name   string
}

// Topic returns the channel name under the key prefix and the keyspace, so
// deployments sharing a Redis hear only their own replicas. A Cluster broadcasts
// a PUBLISH to every node, so subscribers may sit on any of them.
func (r *Redis) Topic(name string) *Topic {
	return &Topic{client: r.client, name: r.prefix + topicSpace + name}
}

// Publish sends msg to every current subscriber.
func (t *Topic) Publish(ctx context.Context, msg []byte) error {
	if err := t.client.Publish(ctx, t.name, msg).Err(); err != nil {
		if cerr := callerDone(ctx); cerr != nil {
			return fmt.Errorf("cache: redis publish: %w: %w", cerr, err)
		}
		return fmt.Errorf("cache: redis publish: %w: %w", ErrUnavailable, err)
	}
	return nil
}

// topicHealthCheck is how often an idle subscription pings Redis, so a dead
// connection is replaced (and resubscribed called) within about this.
const topicHealthCheck = 3 * time.Second

// Subscribe calls onMessage with each message published while subscribed,
// in order, and subscribed each time the subscription is established: at
// first and after each reconnection (what was published while disconnected
// is lost). It runs until stop, which waits for the last call to return,
// and does not wait for Redis: while Redis is down it keeps trying.
func (t *Topic) Subscribe(onMessage func([]byte), subscribed func()) (stop func()) {
	ps := t.client.Subscribe(context.Background(), t.name)
	// Subscription messages arrive with the first subscription and every
	// resubscription; a health check replaces a silent dead connection.
	ch := ps.ChannelWithSubscriptions(redis.WithChannelHealthCheckInterval(topicHealthCheck))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m := range ch {
			switch m := m.(type) {
			case *redis.Subscription:
				if m.Kind == "subscribe" {
					subscribed()
				}
			case *redis.Message:
				onMessage([]byte(m.Payload))
			}
		}
	}()
	return func() {
		_ = ps.Close() // closes ch
		<-done
	}
}
