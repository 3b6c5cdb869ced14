package platform

import (
	"errors"
	"testing"
)

// R62: an adapter runs in a job of its own or is not started; a host in a job with UI
// limits breaks the adapter away where its job allows, and is refused where it does not.
func TestNestingPlan(t *testing.T) {
	const uiLimitDesktop = 0x40 // JOB_OBJECT_UILIMIT_DESKTOP
	cases := []struct {
		name      string
		h         hostJob
		breakaway bool
		err       error
	}{
		{"not in a job", hostJob{}, false, nil},
		{"in a job without UI limits: nested", hostJob{inJob: true, limitFlags: jobLimitBreakawayOK}, false, nil},
		{"UI limits, silent breakaway", hostJob{inJob: true, uiLimits: uiLimitDesktop, limitFlags: jobLimitSilentBreakawayOK}, false, nil},
		{"UI limits, breakaway allowed", hostJob{inJob: true, uiLimits: uiLimitDesktop, limitFlags: jobLimitBreakawayOK}, true, nil},
		{"UI limits, no breakaway", hostJob{inJob: true, uiLimits: uiLimitDesktop}, false, ErrJobNesting},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			breakaway, err := nestingPlan(tc.h)
			if breakaway != tc.breakaway || !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
				t.Errorf("nestingPlan(%+v) = %v, %v; want %v, %v", tc.h, breakaway, err, tc.breakaway, tc.err)
			}
		})
	}
}
