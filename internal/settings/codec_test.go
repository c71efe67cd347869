package settings

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// TestSettingsCodec: cached settings apply only to the user they name; a
// value naming none (an older replica's) is a plain miss.
func TestSettingsCodec(t *testing.T) {
	b, _ := json.Marshal(cachedSettings{Owner: "bob", User: User{Disabled: []string{"pdf"}}})
	if want := `{"user":"bob","disabled":["pdf"]}`; string(b) != want {
		t.Errorf("cached form %s, want %s (what every replica reads)", b, want)
	}
	if s, err := decodeSettings(b, "bob"); err != nil || !reflect.DeepEqual(s.Disabled, []string{"pdf"}) {
		t.Errorf("bob's own: %+v, %v", s, err)
	}
	if s, err := decodeSettings(b, "alice"); !errors.Is(err, errOtherUser) {
		t.Errorf("bob's under alice's key: %+v, %v; want errOtherUser", s, err)
	}
	if s, err := decodeSettings([]byte(`{"disabled":["pdf"]}`), "alice"); err == nil || errors.Is(err, errOtherUser) {
		t.Errorf("a value naming no user: %+v, %v; want a miss", s, err)
	}
	if _, err := decodeSettings([]byte(`{`), "alice"); err == nil || errors.Is(err, errOtherUser) {
		t.Errorf("a malformed value: %v; want a miss", err)
	}
}
