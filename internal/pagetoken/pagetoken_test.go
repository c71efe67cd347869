package pagetoken_test

import (
	"errors"
	"testing"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/pagetoken"
)

func TestRoundTrip(t *testing.T) {
	tok := pagetoken.Encode(`list "/workspace/docs"`, "b.md")
	if tok == "" {
		t.Fatal("Encode of a position gave no token")
	}
	got, err := pagetoken.Decode(`list "/workspace/docs"`, tok)
	if err != nil || got != "b.md" {
		t.Fatalf("Decode = %q, %v; want b.md", got, err)
	}
	if pagetoken.Encode("x", "") != "" {
		t.Error("a complete listing must give the empty token")
	}
	if got, err := pagetoken.Decode("x", ""); got != "" || err != nil {
		t.Errorf("Decode(empty) = %q, %v; want the first page", got, err)
	}
}

func TestDecodeRefuses(t *testing.T) {
	valid := pagetoken.Encode("scope-a", "pos")
	for name, tok := range map[string]string{
		"other scope":   pagetoken.Encode("scope-b", "pos"),
		"garbage":       "garbage!",
		"not JSON":      "bm90IGpzb24",
		"truncated":     valid[:len(valid)-3],
		"empty payload": "e30", // {}
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := pagetoken.Decode("scope-a", tok); !errors.Is(err, errkind.InvalidArgument) {
				t.Errorf("Decode(%q) err = %v, want InvalidArgument", tok, err)
			}
		})
	}
}
