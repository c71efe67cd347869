package skillview

import (
	"fmt"
	"testing"
)

func TestAdmissionAgain(t *testing.T) {
	a := NewAdmission()
	if a.again("k") {
		t.Fatal("a first ask was admitted")
	}
	if !a.again("k") || !a.again("k") {
		t.Fatal("a repeated ask was not admitted")
	}
	// Remembering is bounded: after many other first asks, k is a first
	// ask again.
	for i := range 16 * admissionSlots {
		a.again(fmt.Sprint(i))
	}
	if a.again("k") {
		t.Error("an ask remembered past many others")
	}
}
