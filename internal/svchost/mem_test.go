package svchost_test

import (
	"testing"

	"github.com/lightcone/lightcone/internal/storagesvc"
	"github.com/lightcone/lightcone/internal/svchost"
	"github.com/lightcone/lightcone/internal/svctest"
)

// TestMemConformance runs the conformance suite on the reference service
// (made safe for the suite's concurrent writers by Serial, as the server
// hosts it).
func TestMemConformance(t *testing.T) {
	svctest.Run(t, svchost.NewSerial(storagesvc.NewMem(1)), "mem")
}
