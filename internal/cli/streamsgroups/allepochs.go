package streamsgroups

import (
	"context"
	"fmt"
)

// allEpochsCmd implements --describe --topology --all-epochs (step 4: multi-epoch topology
// descriptions).
func (r *runner) allEpochsCmd(ctx context.Context) error {
	return fmt.Errorf("--all-epochs is not available yet")
}
