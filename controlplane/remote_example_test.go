package controlplane_test

import (
	"fmt"
	"strings"

	"github.com/adapterkit/adapterkit/controlplane"
)

// ExampleParseAllow: the grants of `adapterctl serve --allow`.
func ExampleParseAllow() {
	for _, g := range []string{"alice=call", "CN:monitoring=read", "SPKI:SHA256/" + strings.Repeat("A", 43) + "==logs", "sha256/x=read", "bob=admin"} {
		name, role, err := controlplane.ParseAllow(g)
		if err != nil {
			fmt.Println("refused:", g)
			continue
		}
		fmt.Println(name, role)
	}
	// Output:
	// cn:alice call
	// cn:monitoring read
	// spki:sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA= logs
	// refused: sha256/x=read
	// refused: bob=admin
}
