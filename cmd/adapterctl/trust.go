package main

import "github.com/adapterkit/adapterkit/discovery"

// allowGroupWritableUsage is the help of --allow-group-writable, shared by every
// command that scans adapter directories.
const allowGroupWritableUsage = "take adapters that the group of their directory may replace (group-writable files and\n" +
	"directories, files of other users of that group); by default only files and directories\n" +
	"writable by their owner alone, this user or root, are taken. Every member of the group\n" +
	"can then run programs as this user: see docs/operations.md"

// registerTrust adds --allow-group-writable to f, setting allow.
func registerTrust(f *flags, allow *bool) {
	f.BoolVar(allow, "allow-group-writable", false, allowGroupWritableUsage)
}

// scanOptions are the discovery options of the adapter directories' scans.
func (o *adapterOpts) scanOptions() *discovery.Options {
	return &discovery.Options{AllowGroupWritable: o.allowGroupWritable}
}
