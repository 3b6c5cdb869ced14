package platform

import "errors"

// ErrJobNesting: on Windows the host itself runs in a job object that sets UI limits
// (JobObjectBasicUIRestrictions) and allows no breakaway, so no job of the adapter's own
// can be created around it: Windows nests a job only when neither job sets UI limits.
// The adapter is not started, since it could not be supervised. Run the host
// outside such a job, or have its job allow breakaway (JOB_OBJECT_LIMIT_BREAKAWAY_OK).
var ErrJobNesting = errors.New("the host's job object has UI limits and allows no breakaway: the adapter's job cannot be nested in it")

// hostJob is what the Windows launcher learns of the job object the host runs in.
type hostJob struct {
	inJob bool
	// uiLimits is UIRestrictionsClass of the host's immediate job.
	uiLimits uint32
	// limitFlags is LimitFlags of the host job's basic limit information.
	limitFlags uint32
}

// LimitFlags bits of JOBOBJECT_BASIC_LIMIT_INFORMATION (winnt.h), named here so that
// nestingPlan is platform-neutral and tested everywhere.
const (
	jobLimitBreakawayOK       = 0x00000800
	jobLimitSilentBreakawayOK = 0x00001000
)

// nestingPlan decides how the adapter gets a kill-on-close job of its own, given the
// host's job. Outside a job, or in one without UI limits, the adapter's job is simply
// created (nested in the host's, Windows 8+). A job with UI limits cannot be nested:
// the adapter must then leave the host's job as it is created, which the host's job
// allows silently (SILENT_BREAKAWAY_OK: its children are not in it) or on request
// (BREAKAWAY_OK: breakaway reports CREATE_BREAKAWAY_FROM_JOB is needed); otherwise the
// start is refused with ErrJobNesting.
func nestingPlan(h hostJob) (breakaway bool, err error) {
	switch {
	case !h.inJob || h.uiLimits == 0:
		return false, nil
	case h.limitFlags&jobLimitSilentBreakawayOK != 0:
		return false, nil
	case h.limitFlags&jobLimitBreakawayOK != 0:
		return true, nil
	default:
		return false, ErrJobNesting
	}
}
