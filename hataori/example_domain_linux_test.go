package hataori_test

import (
	"fmt"

	"github.com/hataori/hataori-go/hataori"
)

// In Managed placement (Linux) Hataori pins worker i to CPUs[i] and reads
// the pin back: the placement is Verified.
func ExampleDomain_Placement_managed() {
	local, err := hataori.NewLocalDomain()
	if err != nil {
		fmt.Println(err)
		return
	}
	cpus := local.CPUs()[:1] // a CPU this process may run on
	local.Close()

	d, err := hataori.NewDomain(hataori.DomainConfig{Workers: 1, CPUs: cpus, Pinning: hataori.Managed})
	if err != nil {
		fmt.Println(err) // a *DomainError wrapping ErrPinFailed if pinning is refused
		return
	}
	defer d.Close()
	fmt.Println(d.Placement())
	// Output: Verified
}
