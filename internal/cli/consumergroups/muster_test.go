package consumergroups

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/muster-io/muster/internal/testutil"
)

// onMuster switches newFixture from kfake to a real in-process muster broker
// (set only by TestAgainstMuster, which runs the other tests sequentially).
var onMuster bool

// newMusterFixture starts muster on loopback with the same topics and
// records as the kfake fixture: test (3 partitions: 10, 5, 0 records) and
// foo (2 partitions: 3, 3 records).
func newMusterFixture(t testing.TB) *fixture {
	t.Helper()
	b := testutil.Start(t)
	f := &fixture{t: t, mb: b, addr: b.Addr()}
	adm := kadm.NewClient(f.client())
	defer adm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := adm.CreateTopic(ctx, 3, 1, nil, "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, "foo"); err != nil {
		t.Fatal(err)
	}
	f.produce("test", map[int32]int{0: 10, 1: 5})
	f.produce("foo", map[int32]int{0: 3, 1: 3})
	return f
}

// TestAgainstMuster runs the command's end-to-end tests against muster
// instead of kfake: the tool's output must be the same on both.
func TestAgainstMuster(t *testing.T) {
	onMuster = true
	defer func() { onMuster = false }()
	for _, tc := range []struct {
		name string
		fn   func(*testing.T)
	}{
		{"List", TestList},
		{"DescribeOffsetsEmptyGroup", TestDescribeOffsetsEmptyGroup},
		{"DescribeStableGroup", TestDescribeStableGroup},
		{"DescribeMissingGroup", TestDescribeMissingGroup},
		{"DescribeAllGroups", TestDescribeAllGroups},
		{"DeleteGroups", TestDeleteGroups},
		{"DeleteOffsets", TestDeleteOffsets},
		{"ResetOffsetsSpecifiers", TestResetOffsetsSpecifiers},
		{"ResetOffsetsExecuteExportFromFile", TestResetOffsetsExecuteExportFromFile},
	} {
		t.Run(tc.name, tc.fn)
	}
}
