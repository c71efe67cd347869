package quota

import (
	"math"

	"github.com/skillsvc/skillsvc/internal/objstore"
)

// The cost table: what a call spends of its user's token bucket. The unit is
// what every call cost before calls were priced: one request that lists or
// writes storage, so a user's rate and burst bound those as they always
// did, while a read served from memory costs a tenth of one. Object
// storage's own prices have the same shape (a GET is about a tenth of a
// PUT or LIST on S3). A call pays CallCost when admitted, then what its
// storage requests cost when it ends.
const (
	// CallCost is charged when a call is admitted (a gRPC call, an HTTP
	// request to the JSON API, an MCP request): the CPU and memory of
	// serving it, however it is served.
	CallCost Cost = unit / 10
	// ReadCost is charged per storage read the call made (Get, GetRange,
	// Stat): a cold file read, a head read while indexing a library.
	ReadCost Cost = unit / 10
	// ListCost is charged per page of a storage listing.
	ListCost Cost = unit
	// WriteCost is charged per storage write or delete.
	WriteCost Cost = unit
)

// Cost is an amount of a user's token bucket, in hundredths of the unit
// the rate and burst flags are given in.
type Cost int64

// unit is one unit of rate or burst in Cost: hundredths, so a tenth of a
// unit is a whole number of tokens in the bucket.
const unit = 100

// StorageCost is what the storage requests counted for a call cost.
func StorageCost(r objstore.RequestCounts) Cost {
	return sat(ReadCost, r.Reads) + sat(ListCost, r.Lists) + sat(WriteCost, r.Writes)
}

// sat is c*n, saturating rather than wrapping around.
func sat(c Cost, n int64) Cost {
	if n > 0 && int64(c) > math.MaxInt64/4/n {
		return math.MaxInt64 / 4
	}
	return c * Cost(n)
}

// Units is c in the unit of the rate and burst flags.
func (c Cost) Units() float64 { return float64(c) / unit }
