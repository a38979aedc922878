// Package reliability holds muster's whole-broker reliability tests: corrupt data dirs and the
// SIGKILL crash loop (see docs/reliability.md).
package reliability

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/muster-io/muster/internal/broker"
	"github.com/muster-io/muster/internal/config"
	"github.com/muster-io/muster/internal/testutil"
)

// seedDataDir fills a data dir with a committed offset and ~10 MB of records, enough for Pebble
// to rotate its WAL at least once, and closes the broker.
func seedDataDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	b := testutil.StartIn(t, dir, nil)
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.DefaultProduceTopic("t"), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	big := make([]byte, 100<<10)
	for i := 0; i < 100; i++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: big}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	var os_ kadm.Offsets
	os_.Add(kadm.Offset{Topic: "t", Partition: 0, At: 5, LeaderEpoch: -1})
	if _, err := kadm.NewClient(cl).CommitOffsets(ctx, "g", os_); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	b.Close()
	return dir
}

func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
}

func startErr(dir string) error {
	vals, _ := config.Parse(nil, []string{"offsets.topic.num.partitions=8"})
	b, err := broker.Start(broker.Options{Listen: "127.0.0.1:0", DataDir: dir, Config: vals,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err == nil {
		b.Close()
	}
	return err
}

// TestCorruptDataDirRefusesToStart: a garbled, truncated or missing MANIFEST, and a corrupt WAL
// that is not the newest, make broker.Start fail with an error naming the data dir; nothing is
// served from a store Pebble cannot recover.
func TestCorruptDataDirRefusesToStart(t *testing.T) {
	seed := seedDataDir(t)
	ents, err := os.ReadDir(filepath.Join(seed, "pebble"))
	if err != nil {
		t.Fatal(err)
	}
	var manifest string
	var wals []string
	for _, e := range ents {
		switch {
		case strings.HasPrefix(e.Name(), "MANIFEST-"):
			manifest = e.Name()
		case strings.HasSuffix(e.Name(), ".log"):
			wals = append(wals, e.Name())
		}
	}
	sort.Strings(wals)
	if manifest == "" || len(wals) < 2 {
		t.Fatalf("seed dir lacks a manifest or two WALs: %v", ents)
	}
	garble := func(p string) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for i := len(data) / 3; i < len(data)/3+16 && i < len(data); i++ {
			data[i] ^= 0xff
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	truncate := func(p string) {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, fi.Size()/2); err != nil {
			t.Fatal(err)
		}
	}
	remove := func(p string) {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name, file string
		damage     func(string)
	}{
		{"garbled manifest", manifest, garble},
		{"truncated manifest", manifest, truncate},
		{"missing manifest", manifest, remove},
		{"garbled older WAL", wals[0], garble},
		{"truncated older WAL", wals[0], truncate},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			copyDir(t, seed, dir)
			c.damage(filepath.Join(dir, "pebble", c.file))
			err := startErr(dir)
			if err == nil {
				t.Fatalf("broker started on a data dir with a %s", c.name)
			}
			if !strings.Contains(err.Error(), dir) {
				t.Fatalf("error does not name the data dir %s: %v", dir, err)
			}
			t.Logf("%s: %v", c.name, err)
		})
	}
	t.Run("data dir is a file", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "file")
		os.WriteFile(p, []byte("x"), 0o644)
		if err := startErr(p); err == nil || !strings.Contains(err.Error(), p) {
			t.Fatalf("start on a file: %v", err)
		}
	})
}
