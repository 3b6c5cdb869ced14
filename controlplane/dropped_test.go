package controlplane

import (
	"encoding/json"
	"testing"

	"github.com/adapterkit/adapterkit/platform"
)

// Status carries, per adapter, each dropped supervision mechanism with its
// reason, and nothing when none was dropped.
func TestDroppedStatus(t *testing.T) {
	if got := droppedStatus(platform.Supervision{Mechanism: platform.MechCgroup}); got != nil {
		t.Fatalf("nothing dropped: %v", got)
	}
	s := platform.Supervision{
		Mechanism: platform.MechUserNamespace | platform.MechPidNamespace | platform.MechProcessGroup,
		Dropped:   []platform.Dropped{{Mechanism: platform.MechCgroup, Reason: "not writable by uid 1000"}},
	}
	b, err := json.Marshal(AdapterStatus{State: "running", Mechanism: s.Mechanism.String(), Dropped: droppedStatus(s)})
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	d, ok := back["dropped"].([]any)
	if !ok || len(d) != 1 || d[0].(map[string]any)["mechanism"] != "cgroup" || d[0].(map[string]any)["reason"] != "not writable by uid 1000" {
		t.Fatalf("status JSON %s", b)
	}
	if back["mechanism"] != "userns|pidns|pgroup" {
		t.Fatalf("mechanism %v", back["mechanism"])
	}
}
