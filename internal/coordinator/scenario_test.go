package coordinator_test

import (
	"testing"

	"github.com/muster-io/muster/internal/coordinator/coordtest"
)

// TestScenarios runs the scripted scenarios under testdata/scenarios (coordtest.RunScripts):
// classic, consumer and streams groups and offsets, with golden output. Regenerate the expected
// output with `go test ./internal/coordinator -run TestScenarios -rewrite` and review the diff.
func TestScenarios(t *testing.T) {
	coordtest.RunScripts(t, "testdata/scenarios")
}
