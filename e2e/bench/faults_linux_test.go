package main

import (
	"os"
	"syscall"
	"testing"
)

// minorFaults counts the faults a process takes touching fresh anonymous memory: each
// of the pages mapped here faults once on its first write.
func TestMinorFaults(t *testing.T) {
	const pages = 64
	size := pages * os.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mem)
	before, ok := minorFaults(os.Getpid())
	if !ok {
		t.Fatal("minor faults of this process not readable from /proc")
	}
	for i := 0; i < size; i += os.Getpagesize() {
		mem[i] = 1
	}
	after, ok := minorFaults(os.Getpid())
	if !ok {
		t.Fatal("minor faults of this process not readable the second time")
	}
	if after-before < pages {
		t.Errorf("touching %d fresh pages counted %d minor faults, want at least %d", pages, after-before, pages)
	}
	if _, ok := minorFaults(-1); ok {
		t.Error("minorFaults(-1) claims to have read something")
	}
	if got := faultsKey("mbps_3.9MiB"); got != "faults_3.9MiB" {
		t.Errorf("faultsKey(mbps_3.9MiB) = %q", got)
	}
}
