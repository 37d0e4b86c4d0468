package release

import (
	"testing"
	"time"
)

// Backoff: 10 s at first, then as long as waited, at most 10 minutes.
func TestBackoff(t *testing.T) {
	for waited, want := range map[time.Duration]time.Duration{
		0:                10 * time.Second,
		40 * time.Second: 40 * time.Second,
		3 * time.Hour:    10 * time.Minute,
	} {
		if got := Backoff(waited); got != want {
			t.Errorf("Backoff(%s) = %s, want %s", waited, got, want)
		}
	}
}
