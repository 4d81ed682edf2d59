//go:build unix

package sidecar_test

import (
	"os"
	"os/exec"
	"testing"
)

// A part of this suite run as a host's own smoke tests would run against
// a persistent server: every host through `ptyplex-sidecar --persist NAME
// --readopt`, one server for two runs in a row, the second reopening the
// ids the first left running (docs/persist.md). scripts/test-readopt.sh
// (make test-readopt) runs the whole suite so, in two test processes.
func TestSubsetThroughReadoptTwice(t *testing.T) {
	if len(sidecarArgs) > 0 {
		t.Skip("the whole suite runs through --persist already")
	}
	if testing.Short() {
		t.Skip("-short")
	}
	dir := t.TempDir()
	t.Setenv("PTYPLEX_RUNTIME_DIR", dir) // for the bridges the tests start
	const name = "subset"
	sidecarArgs = []string{"--persist", name, "--readopt"}
	t.Cleanup(func() {
		sidecarArgs = nil
		cmd := exec.Command(sidecarBin, "--persist", name, "--stop")
		cmd.Env = append(os.Environ(), "PTYPLEX_RUNTIME_DIR="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("--stop: %v\n%s", err, out)
		}
		if t.Failed() {
			b, _ := os.ReadFile(dir + "/sidecar/" + name + ".log")
			t.Logf("server log:\n%s", b)
		}
	})
	subset := []struct {
		name string
		fn   func(*testing.T)
	}{
		{"TestExitCodes", TestExitCodes},
		{"TestIDReusableAfterExit", TestIDReusableAfterExit},
		{"TestInputArrivesInOrder", TestInputArrivesInOrder},
		{"TestStuckChildDoesNotStallOthers", TestStuckChildDoesNotStallOthers},
		{"TestResizeChangesSizeAndSignalsChild", TestResizeChangesSizeAndSignalsChild},
		{"TestCreditGatesReads", TestCreditGatesReads},
		{"TestOpenAppliesEveryField", TestOpenAppliesEveryField},
		{"TestOpenErrorsAffectOnlyThatTerminal", TestOpenErrorsAffectOnlyThatTerminal},
		{"TestSignalReachesTrap", TestSignalReachesTrap},
		{"TestOpenEnvMergesOverSidecarEnvironment", TestOpenEnvMergesOverSidecarEnvironment},
	}
	for _, run := range []string{"run1", "run2"} {
		t.Run(run, func(t *testing.T) {
			for _, s := range subset {
				t.Run(s.name, s.fn)
			}
		})
	}
}
