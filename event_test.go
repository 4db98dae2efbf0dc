package evalctl

import (
	"reflect"
	"testing"
)

// TestScheduleDetailRoundTrip: a schedule event's detail reads back as the
// figures written (to 0.1 s), on a pool of engines and on one engine, and
// a detail that is not one is refused.
func TestScheduleDetailRoundTrip(t *testing.T) {
	for _, s := range []Schedule{
		{Places: &PlaceWait{TotalSeconds: 67.3, Grants: 41, LongestSeconds: 12.5}, LongestWithoutProgressSeconds: 80.1},
		{Places: &PlaceWait{}, LongestWithoutProgressSeconds: 0},
		{LongestWithoutProgressSeconds: 0.4},
	} {
		d := s.Detail()
		got, err := ParseSchedule(d)
		if err != nil {
			t.Fatalf("%q: %v", d, err)
		}
		if !reflect.DeepEqual(got, s) {
			t.Errorf("%q read back as %+v, want %+v", d, got, s)
		}
	}
	if d := (Schedule{Places: &PlaceWait{TotalSeconds: 1.25, Grants: 3, LongestSeconds: 1}, LongestWithoutProgressSeconds: 2}).Detail(); d != "waited for sandbox places 1.2 s over 3 grant(s), longest 1.0 s; longest without progress 2.0 s" {
		t.Errorf("detail %q", d)
	}
	for _, bad := range []string{"", "waited a while", "waited for sandbox places 1 s over 2 grant(s), longest 1 s", "longest without progress soon", "longest without progress 1 s and more"} {
		if s, err := ParseSchedule(bad); err == nil {
			t.Errorf("%q read as %+v", bad, s)
		}
	}
}
