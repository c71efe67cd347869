package skillmd_test

import (
	"fmt"
	"testing"

	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// BenchmarkFormatBlock renders the default block of the many-tenants
// library (issue 22: 304 skills, more than the default budget holds) and of
// a library that fits, in each format: a FormatSkills reply the reply cache
// does not hold costs this.
func BenchmarkFormatBlock(b *testing.B) {
	for _, n := range []int{304, 40} {
		list := manySkills(n, 160)
		for _, format := range skillmd.FormatNames() {
			b.Run(fmt.Sprintf("skills=%d/%s", n, format), func(b *testing.B) {
				for b.Loop() {
					if _, err := skillmd.FormatBlock(list, skillmd.FormatOptions{Format: format}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
