package store_test

import (
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"github.com/muster-io/muster/internal/store"
	"github.com/muster-io/muster/internal/store/storetest"
)

// TestMemoryContract runs the store contract against the in-memory store.
func TestMemoryContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Impl {
		var m *store.Memory
		return storetest.Impl{Fencing: true, Ordered: true, Open: func(shards int32) store.Store {
			if m == nil {
				m = store.NewMemory(shards)
			}
			return m
		}}
	})
}

// pebbleStore closes its Pebble DB with the store (the broker owns the DB otherwise).
type pebbleStore struct {
	*store.Pebble
	db *pebble.DB
}

func (p pebbleStore) Close() error { return p.db.Close() }

// TestPebbleContract runs the store contract against the embedded Pebble store, reopening the
// same directory for restarts.
func TestPebbleContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Impl {
		dir := filepath.Join(t.TempDir(), "pebble")
		return storetest.Impl{Ordered: true, Open: func(shards int32) store.Store {
			db, err := pebble.Open(dir, &pebble.Options{})
			if err != nil {
				t.Fatal(err)
			}
			s, err := store.OpenPebble(db, shards)
			if err != nil {
				t.Fatal(err)
			}
			return pebbleStore{s, db}
		}}
	})
}
