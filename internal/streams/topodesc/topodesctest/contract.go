package topodesctest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/muster-io/muster/internal/streams/topodesc"
	"github.com/muster-io/muster/internal/streams/topology"
)

// resultTimeout bounds how long the contract waits for one result.
const resultTimeout = 10 * time.Second

// Description returns a small valid description whose sink topic is
// "out-<variant>", so variants differ.
func Description(variant string) *topology.Description {
	d, err := topology.NewBuilder().
		Subtopology("0").
		Source("src", []string{"in"}, "proc").
		Processor("proc", []string{"store"}, "sink").
		Sink("sink", "out-"+variant).
		Done().
		GlobalStore("gsrc", "global", "gproc", "gstore").
		Build()
	if err != nil {
		panic(err)
	}
	return d
}

// LargeDescription returns a valid description whose canonical JSON is
// larger than n bytes.
func LargeDescription(n int) *topology.Description {
	d, err := topology.NewBuilder().Subtopology("0").
		Source("src", []string{strings.Repeat("t", n)}).Done().Build()
	if err != nil {
		panic(err)
	}
	return d
}

// WaitErr receives one result from ch, failing the test after 10 s.
func WaitErr(t testing.TB, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(resultTimeout):
		t.Fatal("plugin did not deliver a result")
		return nil
	}
}

// WaitGet receives one GetResult from ch, failing the test after 10 s.
func WaitGet(t testing.TB, ch <-chan topodesc.GetResult) topodesc.GetResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(resultTimeout):
		t.Fatal("plugin did not deliver a result")
		return topodesc.GetResult{}
	}
}

// RunContractTests checks the KIP-1331 plugin contract against plugins made
// by newPlugin (a fresh, empty plugin per subtest; the suite closes it):
// idempotent set and delete, get after set, not-stored results, odd group
// ids, permanent failures for invalid and oversized (> 1 MiB) descriptions,
// cancelled contexts, concurrent use, buffered result channels and Close.
func RunContractTests(t *testing.T, newPlugin func(t *testing.T) topodesc.Plugin) {
	ctx := context.Background()
	open := func(t *testing.T) topodesc.Plugin {
		p := newPlugin(t)
		t.Cleanup(func() { _ = p.Close() })
		return p
	}
	set := func(t *testing.T, p topodesc.Plugin, g string, e int32, d *topology.Description) error {
		t.Helper()
		return WaitErr(t, p.SetTopology(ctx, g, e, d))
	}
	get := func(t *testing.T, p topodesc.Plugin, g string, e int32) topodesc.GetResult {
		t.Helper()
		return WaitGet(t, p.GetTopology(ctx, g, e))
	}
	del := func(t *testing.T, p topodesc.Plugin, g string) error {
		t.Helper()
		return WaitErr(t, p.DeleteTopology(ctx, g))
	}
	mustGet := func(t *testing.T, p topodesc.Plugin, g string, e int32, want *topology.Description) {
		t.Helper()
		r := get(t, p, g, e)
		if r.Err != nil {
			t.Fatalf("get %q/%d: %v", g, e, r.Err)
		}
		if !r.Description.Equal(want) {
			if want == nil {
				t.Fatalf("get %q/%d: got a description, want not stored", g, e)
			}
			t.Fatalf("get %q/%d: got %v, want\n%s", g, e, r.Description, topology.Text(want))
		}
	}

	t.Run("Name", func(t *testing.T) {
		if open(t).Name() == "" {
			t.Error("empty name")
		}
	})

	t.Run("SetGetDelete", func(t *testing.T) {
		p := open(t)
		d := Description("a")
		mustGet(t, p, "g", 1, nil)
		if err := set(t, p, "g", 1, d); err != nil {
			t.Fatalf("set: %v", err)
		}
		mustGet(t, p, "g", 1, d)
		mustGet(t, p, "g", 2, nil)
		mustGet(t, p, "g", 0, nil)
		mustGet(t, p, "other", 1, nil)
		if err := del(t, p, "g"); err != nil {
			t.Fatalf("delete: %v", err)
		}
		mustGet(t, p, "g", 1, nil)
	})

	t.Run("SetIsIdempotent", func(t *testing.T) {
		p := open(t)
		d := Description("a")
		for i := 0; i < 3; i++ {
			if err := set(t, p, "g", 4, d); err != nil {
				t.Fatalf("set #%d: %v", i, err)
			}
		}
		mustGet(t, p, "g", 4, d)
	})

	t.Run("DeleteIsIdempotent", func(t *testing.T) {
		p := open(t)
		if err := del(t, p, "never-stored"); err != nil {
			t.Fatalf("delete of nothing: %v", err)
		}
		if err := set(t, p, "g", 1, Description("a")); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ {
			if err := del(t, p, "g"); err != nil {
				t.Fatalf("delete #%d: %v", i, err)
			}
		}
		mustGet(t, p, "g", 1, nil)
	})

	epochs := func(t *testing.T, p topodesc.Plugin, g string) []int32 {
		t.Helper()
		ch := p.StoredEpochs(ctx, g)
		select {
		case r := <-ch:
			if r.Err != nil {
				t.Fatalf("stored epochs of %q: %v", g, r.Err)
			}
			return r.Epochs
		case <-time.After(10 * time.Second):
			t.Fatalf("stored epochs of %q: no result", g)
		}
		return nil
	}
	wantEpochs := func(t *testing.T, p topodesc.Plugin, g string, want ...int32) {
		t.Helper()
		if got := epochs(t, p, g); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("stored epochs of %q: %v, want %v", g, got, want)
		}
	}

	t.Run("NewEpochKeepsThePrevious", func(t *testing.T) {
		p := open(t)
		wantEpochs(t, p, "g")
		if err := set(t, p, "g", 1, Description("one")); err != nil {
			t.Fatal(err)
		}
		if err := set(t, p, "g", 2, Description("two")); err != nil {
			t.Fatal(err)
		}
		// A rolling upgrade: both epochs are readable.
		mustGet(t, p, "g", 2, Description("two"))
		mustGet(t, p, "g", 1, Description("one"))
		wantEpochs(t, p, "g", 1, 2)
		// A third epoch drops the oldest: at most two per group.
		if err := set(t, p, "g", 3, Description("three")); err != nil {
			t.Fatal(err)
		}
		wantEpochs(t, p, "g", 2, 3)
		mustGet(t, p, "g", 1, nil)
		mustGet(t, p, "g", 2, Description("two"))
		// The upgrade completes: the previous epoch is deleted alone (idempotently).
		for i := 0; i < 2; i++ {
			if err := WaitErr(t, p.DeleteTopologyEpoch(ctx, "g", 2)); err != nil {
				t.Fatal(err)
			}
		}
		wantEpochs(t, p, "g", 3)
		mustGet(t, p, "g", 3, Description("three"))
		// Rolling back to an older epoch keeps the newer one as the other.
		if err := set(t, p, "g", 2, Description("two")); err != nil {
			t.Fatal(err)
		}
		wantEpochs(t, p, "g", 2, 3)
		if err := del(t, p, "g"); err != nil {
			t.Fatal(err)
		}
		wantEpochs(t, p, "g")
		mustGet(t, p, "g", 2, nil)
		mustGet(t, p, "g", 3, nil)
		// A recreated group restarts at epoch 0 and must be storable.
		if err := set(t, p, "g", 0, Description("zero")); err != nil {
			t.Fatal(err)
		}
		mustGet(t, p, "g", 0, Description("zero"))
		wantEpochs(t, p, "g", 0)
		// Deleting the last epoch leaves nothing.
		if err := WaitErr(t, p.DeleteTopologyEpoch(ctx, "g", 0)); err != nil {
			t.Fatal(err)
		}
		wantEpochs(t, p, "g")
		if err := WaitErr(t, p.DeleteTopologyEpoch(ctx, "nothing-here", 4)); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("GroupsAreIsolated", func(t *testing.T) {
		p := open(t)
		ids := []string{"a/b", "a%2Fb", "a", "..", ".", "with space", "ünïcödé", "UPPER", "upper",
			strings.Repeat("x", 300), "q?x=1#frag", "tab\tnew\nline"}
		for i, g := range ids {
			if err := set(t, p, g, 1, Description(fmt.Sprint(i))); err != nil {
				t.Fatalf("set %q: %v", g, err)
			}
		}
		for i, g := range ids {
			mustGet(t, p, g, 1, Description(fmt.Sprint(i)))
		}
		if err := del(t, p, "a/b"); err != nil {
			t.Fatal(err)
		}
		mustGet(t, p, "a/b", 1, nil)
		mustGet(t, p, "a%2Fb", 1, Description("1"))
		mustGet(t, p, "a", 1, Description("2"))
	})

	t.Run("InvalidIsPermanent", func(t *testing.T) {
		p := open(t)
		bad := &topology.Description{Subtopologies: []topology.Subtopology{{ID: "0", Nodes: []topology.Node{
			{Name: "src", Type: topology.NodeTypeSource, SourceTopics: []string{"in"}, Successors: []string{"missing"}},
		}}}}
		for name, call := range map[string]func() error{
			"nil description":    func() error { return set(t, p, "g", 1, nil) },
			"dangling successor": func() error { return set(t, p, "g", 1, bad) },
			"empty group":        func() error { return set(t, p, "", 1, Description("a")) },
		} {
			err := call()
			if !errors.Is(err, topodesc.ErrInvalid) || !topodesc.IsPermanent(err) {
				t.Errorf("%s: err = %v, want permanent ErrInvalid", name, err)
			}
		}
		mustGet(t, p, "g", 1, nil)
	})

	t.Run("TooLargeIsPermanent", func(t *testing.T) {
		p := open(t)
		err := set(t, p, "g", 1, LargeDescription(2<<20))
		if !errors.Is(err, topodesc.ErrTooLarge) || !topodesc.IsPermanent(err) {
			t.Fatalf("err = %v, want permanent ErrTooLarge", err)
		}
		mustGet(t, p, "g", 1, nil)
		// A description just under the default limit is accepted.
		ok := LargeDescription(900 << 10)
		if err := set(t, p, "g", 1, ok); err != nil {
			t.Fatalf("900 KiB description: %v", err)
		}
		mustGet(t, p, "g", 1, ok)
	})

	t.Run("CancelledContext", func(t *testing.T) {
		p := open(t)
		c, cancel := context.WithCancel(ctx)
		cancel()
		if err := WaitErr(t, p.SetTopology(c, "g", 1, Description("a"))); err == nil {
			t.Error("set with cancelled context succeeded")
		} else if topodesc.IsPermanent(err) {
			t.Errorf("cancelled set is permanent: %v", err)
		}
		if r := WaitGet(t, p.GetTopology(c, "g", 1)); r.Err == nil {
			t.Error("get with cancelled context succeeded")
		}
		if err := WaitErr(t, p.DeleteTopology(c, "g")); err == nil {
			t.Error("delete with cancelled context succeeded")
		}
	})

	t.Run("ResultChannelsAreBuffered", func(t *testing.T) {
		p := open(t)
		s := p.SetTopology(ctx, "g", 1, Description("a"))
		g := p.GetTopology(ctx, "g", 1)
		d := p.DeleteTopology(ctx, "h")
		if cap(s) != 1 || cap(g) != 1 || cap(d) != 1 {
			t.Fatalf("channel capacities %d %d %d, want 1", cap(s), cap(g), cap(d))
		}
		// Nobody reads for a while: the plugin must not get stuck.
		time.Sleep(10 * time.Millisecond)
		if err := WaitErr(t, s); err != nil {
			t.Fatal(err)
		}
		WaitGet(t, g)
		if err := WaitErr(t, d); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("Concurrent", func(t *testing.T) {
		p := open(t)
		groups := []string{"g0", "g1", "g2", "g3"}
		variants := map[string]*topology.Description{"a": Description("a"), "b": Description("b")}
		var wg sync.WaitGroup
		errs := make(chan error, 1000)
		for w := 0; w < 16; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 40; i++ {
					g := groups[(w+i)%len(groups)]
					switch (w*7 + i) % 4 {
					case 0, 1:
						// Same (group, epoch) always carries identical data.
						epoch := int32((w + i) % 3)
						v := "b"
						if epoch == 1 {
							v = "a"
						}
						if err := WaitErr(t, p.SetTopology(ctx, g, epoch, variants[v])); err != nil {
							errs <- fmt.Errorf("set: %w", err)
						}
					case 2:
						r := WaitGet(t, p.GetTopology(ctx, g, 1))
						if r.Err != nil {
							errs <- fmt.Errorf("get: %w", r.Err)
						} else if r.Description != nil && !r.Description.Equal(variants["a"]) {
							errs <- errors.New("get returned a torn or foreign description")
						}
					case 3:
						if err := WaitErr(t, p.DeleteTopology(ctx, g)); err != nil {
							errs <- fmt.Errorf("delete: %w", err)
						}
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})

	t.Run("Close", func(t *testing.T) {
		p := newPlugin(t)
		if err := set(t, p, "g", 1, Description("a")); err != nil {
			t.Fatal(err)
		}
		if err := p.Close(); err != nil {
			t.Fatalf("close: %v", err)
		}
		if err := p.Close(); err != nil {
			t.Fatalf("second close: %v", err)
		}
		if err := set(t, p, "g", 2, Description("a")); err == nil || topodesc.IsPermanent(err) {
			t.Errorf("set after close = %v, want a transient error", err)
		}
		if r := get(t, p, "g", 1); r.Err == nil {
			t.Error("get after close succeeded")
		}
		if err := del(t, p, "g"); err == nil {
			t.Error("delete after close succeeded")
		}
	})
}
