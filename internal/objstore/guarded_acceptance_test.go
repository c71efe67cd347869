package objstore_test

import (
	"testing"

	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/memory"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
)

// TestAcceptanceGuarded proves the read-only guard, while writable,
// changes no behaviour (file modes included).
func TestAcceptanceGuarded(t *testing.T) {
	objstoretest.AcceptanceTest(t, func(t *testing.T) objstore.Bucket {
		return objstore.NewGuarded(memory.New())
	})
}
