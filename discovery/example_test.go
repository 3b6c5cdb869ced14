package discovery_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/adapterkit/adapterkit/discovery"
)

// Example_scan lays out an adapter directory, scans it and picks a version.
func Example_scan() {
	dir, err := os.MkdirTemp("", "adapters")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	for _, name := range []string{"thermo_v1.2.0", "thermo_v1.3.0-rc.1", "thermo_v1.2.9", "thermo_v2.0.0", "README.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			fmt.Println(err)
			return
		}
	}

	// The naming rule of Linux, whatever OS runs the example.
	res, err := discovery.Scan(context.Background(), &discovery.Options{GOOS: "linux"}, dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, a := range res.Adapters {
		fmt.Println("found", a.Name, a.Version, filepath.Base(a.Path))
	}
	for _, r := range res.Rejected {
		fmt.Println("rejected", filepath.Base(r.Path)+":", r.Reason)
	}

	ref, err := discovery.ParseRef("thermo@~> 1.2.0")
	if err != nil {
		fmt.Println(err)
		return
	}
	a, err := res.Select(ref, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("selected", a.Version, "package directory is the scanned one:", a.Dir == dir)
	// Output:
	// found thermo 2.0.0 thermo_v2.0.0
	// found thermo 1.3.0-rc.1 thermo_v1.3.0-rc.1
	// found thermo 1.2.9 thermo_v1.2.9
	// found thermo 1.2.0 thermo_v1.2.0
	// rejected README.txt: bad name
	// selected 1.2.9 package directory is the scanned one: true
}

func ExampleParseRef() {
	for _, s := range []string{"thermo", "thermo@~> 1.2", "x@>= 2, < 3", "@1.0.0", "x@bogus"} {
		ref, err := discovery.ParseRef(s)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Printf("name %q, constraints %q\n", ref.Name, ref.Constraints)
	}
	// Output:
	// name "thermo", constraints ""
	// name "thermo", constraints "~> 1.2"
	// name "x", constraints ">= 2, < 3"
	// error: discovery: adapter reference "@1.0.0": invalid adapter name: "" must be 1-64 of [a-z0-9-], not starting with '-'
	// error: discovery: adapter reference "x@bogus": invalid version constraint: malformed constraint: bogus
}

func ExampleResult_Select() {
	res := &discovery.Result{}
	for _, name := range []string{"thermo_v1.0.0", "thermo_v1.1.0", "thermo_v2.0.0-beta.1"} {
		n, v, err := discovery.ParseFileName(name, "linux")
		if err != nil {
			fmt.Println(err)
			return
		}
		res.Adapters = append(res.Adapters, discovery.Adapter{Name: n, Version: v})
	}
	ref, _ := discovery.ParseRef("thermo")
	stable, _ := res.Select(ref, nil)
	newest, _ := res.Select(ref, &discovery.SelectOptions{Prerelease: true})
	fmt.Println(stable.Version, newest.Version)

	ref, _ = discovery.ParseRef("thermo@>= 3")
	_, err := res.Select(ref, nil)
	fmt.Println(err)
	// Output:
	// 1.1.0 2.0.0-beta.1
	// discovery: "thermo@>= 3": no version of the adapter matches (versions found: 2.0.0-beta.1, 1.1.0, 1.0.0)
}
