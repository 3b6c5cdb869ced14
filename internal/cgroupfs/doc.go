// Package cgroupfs finds the cgroup v2 filesystem and a process's cgroup directory in it,
// for package platform and the tests' testkit alike: the cgroup2 mount is read from
// /proc/self/mountinfo (it is not always /sys/fs/cgroup: hybrid hierarchies mount it at
// /sys/fs/cgroup/unified), and a process's cgroup from /proc/PID/cgroup. Linux only.
//
// It is in the module's shared layer (internal/) and imports no package of the module:
// platform and internal/testkit both use it, and the top-level internal/ is the only
// place both may import.
package cgroupfs
