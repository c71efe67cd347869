package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/mcpserver/wire"
	"github.com/skillsvc/skillsvc/internal/quota"
)

// codeLimited is the JSON-RPC error of a request refused by the caller's
// per-user limits: a server-defined code (JSON-RPC reserves -32000 to
// -32099 for them), so a host can tell "slow down" from a failure; its data
// says when to retry.
const codeLimited = -32000

// unlimited is the Limiter of a handler given none (tests, tools).
type unlimited struct{}

func (unlimited) Acquire(context.Context, string) (func(), error) { return func() {}, nil }

func (unlimited) Charge(string, quota.Cost) {}

// limitedData is the error's data: the retry delay in milliseconds (as
// gRPC's RetryInfo and the JSON gateway's Retry-After give it).
type limitedData struct {
	RetryAfterMs int64 `json:"retryAfterMs"`
}

// writeLimited answers a request over its caller's limits: the JSON-RPC
// error for it (HTTP 200, as any request's error) with Retry-After too.
func writeLimited(w http.ResponseWriter, id json.RawMessage, err error) {
	delay, _ := errkind.RetryDelay(err)
	w.Header().Set("Retry-After", strconv.FormatInt(int64(math.Ceil(delay.Seconds())), 10))
	// Rounded up, as Retry-After is: a 0.4 ms wait is not "retry now".
	data, _ := json.Marshal(limitedData{RetryAfterMs: int64(math.Ceil(float64(delay) / float64(time.Millisecond)))})
	msg := fmt.Sprintf("RESOURCE_EXHAUSTED: %s", errkind.Message(err))
	if len(id) == 0 {
		// A batch: its requests are refused together.
		wire.WriteErrorData(w, http.StatusTooManyRequests, nil, codeLimited, msg, data)
		return
	}
	wire.WriteErrorData(w, http.StatusOK, id, codeLimited, msg, data)
}
