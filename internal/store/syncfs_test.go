package store

import (
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// TestSyncCountingFSCountsWALSyncs: a synced Pebble write is one or more WAL syncs; a NoSync
// write adds none.
func TestSyncCountingFSCountsWALSyncs(t *testing.T) {
	fs := NewSyncCountingFS(nil)
	db, err := pebble.Open(t.TempDir(), &pebble.Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	before := fs.WALSyncs.Load()
	if err := db.Set([]byte("k"), []byte("v"), pebble.NoSync); err != nil {
		t.Fatal(err)
	}
	if got := fs.WALSyncs.Load(); got != before {
		t.Fatalf("NoSync write synced the WAL (%d → %d)", before, got)
	}
	for i := 0; i < 3; i++ {
		if err := db.Set([]byte("k"), []byte("v"), pebble.Sync); err != nil {
			t.Fatal(err)
		}
	}
	if got := fs.WALSyncs.Load() - before; got < 3 {
		t.Fatalf("3 synced writes counted %d WAL syncs", got)
	}
}
