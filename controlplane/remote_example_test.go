package controlplane_test

import (
	"fmt"

	"github.com/adapterkit/adapterkit/controlplane"
)

// ExampleParseAllow: the grants of `adapterctl serve --allow`.
func ExampleParseAllow() {
	for _, g := range []string{"alice=call", "monitoring=read", "bob=admin"} {
		name, role, err := controlplane.ParseAllow(g)
		if err != nil {
			fmt.Println("refused:", g)
			continue
		}
		fmt.Println(name, role)
	}
	// Output:
	// alice call
	// monitoring read
	// refused: bob=admin
}
