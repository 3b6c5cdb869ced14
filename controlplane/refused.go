package controlplane

import (
	"context"
	"time"

	"github.com/adapterkit/adapterkit/registry"
)

// stageRefused is CallDetails.Stage of a Send or Capabilities entry whose adapter
// file was refused before (registry.Refusal): it was not started.
const stageRefused = "refused"

// refusalLookup bounds the look-up of the version serving a name, for Status.
const refusalLookup = 2 * time.Second

// refusedMessage says why a file is not started and what starts it again.
func refusedMessage(rf registry.Refusal) string {
	return "adapter " + rf.Name + " " + rf.Version + " (" + rf.Path + ") was refused at " + rf.At.UTC().Format(time.RFC3339) +
		": " + rf.Reason + "; it is not started until a new file replaces it, its pin is removed, or 'adapterctl upgrade --retry " + rf.Name + "'"
}

// refusedStatus lists the refused adapter files, each with the version serving its
// name: the open one's, else the one a call by name would open.
func (s *adapterSet) refusedStatus() []RefusedStatus {
	list := s.reg.Refused()
	out := make([]RefusedStatus, 0, len(list))
	serving := make(map[string]string)
	for _, rf := range list {
		v, ok := serving[rf.Name]
		if !ok {
			v = s.servingVersion(rf.Name)
			serving[rf.Name] = v
		}
		out = append(out, RefusedStatus{Refusal: rf, Serving: v})
	}
	return out
}

// servingVersion is the version serving name: the open one's, else the one a call by
// name would open; "" when none would.
func (s *adapterSet) servingVersion(name string) string {
	s.mu.Lock()
	sl := s.open[slotKey{name: name}]
	s.mu.Unlock()
	if sl != nil {
		select {
		case <-sl.ready:
			if sl.h != nil {
				return sl.h.Upgrades().Version
			}
		default:
		}
	}
	ctx, cancel := context.WithTimeout(s.base, refusalLookup)
	defer cancel()
	if a, err := s.reg.Lookup(ctx, name); err == nil {
		return a.Version.String()
	}
	return ""
}
