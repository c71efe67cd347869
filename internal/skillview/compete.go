package skillview

import (
	"fmt"

	"github.com/skillsvc/skillsvc/internal/errkind"
)

// MaxCompeteQueries bounds the queries of one coexistence check.
const MaxCompeteQueries = 1000

// CheckCompete checks a coexistence check's request: k within 1..maxK, at
// most MaxCompeteQueries queries, each 1..maxQueryBytes long.
func CheckCompete(queries []string, k, maxK, maxQueryBytes int) error {
	if k <= 0 || k > maxK {
		return fmt.Errorf("%w: k must be 1..%d", errkind.InvalidArgument, maxK)
	}
	if len(queries) > MaxCompeteQueries {
		return fmt.Errorf("%w: at most %d queries", errkind.InvalidArgument, MaxCompeteQueries)
	}
	for _, q := range queries {
		if q == "" || len(q) > maxQueryBytes {
			return fmt.Errorf("%w: each query must be 1..%d bytes", errkind.InvalidArgument, maxQueryBytes)
		}
	}
	return nil
}
