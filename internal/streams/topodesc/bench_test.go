package topodesc_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/muster-io/muster/internal/streams/topodesc"
	"github.com/muster-io/muster/internal/streams/topodesc/topodesctest"
)

func benchPlugin(b *testing.B, cfg topodesc.Config) {
	ctx := context.Background()
	p, err := topodesc.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	d := topodesctest.Description("bench")
	b.Run("Set", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if err := <-p.SetTopology(ctx, "g"+strconv.Itoa(i%64), 1, d); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("Get", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if r := <-p.GetTopology(ctx, "g"+strconv.Itoa(i%64), 1); r.Err != nil || r.Description == nil {
				b.Fatal(r.Err)
			}
			i++
		}
	})
}

func BenchmarkMemory(b *testing.B) { benchPlugin(b, topodesc.Config{Class: "memory"}) }

func BenchmarkDisk(b *testing.B) {
	benchPlugin(b, topodesc.Config{Class: "disk", DataDir: b.TempDir()})
}

func BenchmarkHTTP(b *testing.B) {
	s := topodesctest.NewStore()
	defer s.Close()
	benchPlugin(b, topodesc.Config{Class: "http", HTTPURL: s.URL})
}
