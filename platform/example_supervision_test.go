package platform_test

import (
	"fmt"

	"github.com/adapterkit/adapterkit/platform"
)

// What an unprivileged host without a delegated cgroup reports for its adapters.
func ExampleSupervision_String() {
	s := platform.Supervision{
		Mechanism: platform.MechUserNamespace | platform.MechPidNamespace |
			platform.MechProcessGroup | platform.MechParentDeathSignal,
		Dropped: []platform.Dropped{{Mechanism: platform.MechCgroup,
			Reason: "cgroup /sys/fs/cgroup/user.slice is not writable by uid 1000"}},
	}
	fmt.Println(s.Mechanism.Proves())
	fmt.Println(s)
	// Output:
	// true
	// userns|pidns|pgroup|pdeathsig (cgroup dropped: cgroup /sys/fs/cgroup/user.slice is not writable by uid 1000)
}

// A host that re-executes itself with descriptors it inherited keeps them as they are;
// its adapters may then inherit them too.
func ExampleSetHostOptions() {
	if err := platform.SetHostOptions(platform.HostOptions{KeepInheritedFDs: true}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("inherited descriptors are kept")
	_ = platform.SetHostOptions(platform.HostOptions{}) // back to the default
	// Output: inherited descriptors are kept
}
