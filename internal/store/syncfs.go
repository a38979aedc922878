package store

import (
	"strings"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// SyncCountingFS wraps a Pebble file system and counts the syncs of write-ahead-log files (names
// ending in ".log"): every Sync, SyncData and SyncTo call, i.e. the fsyncs that make appends
// durable. With group commit, records committed ÷ WALSyncs is the records per fsync.
type SyncCountingFS struct {
	vfs.FS
	// WALSyncs counts WAL file syncs since the FS was created.
	WALSyncs atomic.Int64
}

// NewSyncCountingFS wraps fs (vfs.Default when nil).
func NewSyncCountingFS(fs vfs.FS) *SyncCountingFS {
	if fs == nil {
		fs = vfs.Default
	}
	return &SyncCountingFS{FS: fs}
}

func (s *SyncCountingFS) wrap(name string, f vfs.File, err error) (vfs.File, error) {
	if err != nil || !strings.HasSuffix(name, ".log") {
		return f, err
	}
	return &syncCountingFile{File: f, n: &s.WALSyncs}, nil
}

// Create implements vfs.FS.
func (s *SyncCountingFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := s.FS.Create(name, c)
	return s.wrap(name, f, err)
}

// OpenReadWrite implements vfs.FS.
func (s *SyncCountingFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := s.FS.OpenReadWrite(name, c, opts...)
	return s.wrap(name, f, err)
}

// ReuseForWrite implements vfs.FS.
func (s *SyncCountingFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := s.FS.ReuseForWrite(oldname, newname, c)
	return s.wrap(newname, f, err)
}

type syncCountingFile struct {
	vfs.File
	n *atomic.Int64
}

func (f *syncCountingFile) Sync() error     { f.n.Add(1); return f.File.Sync() }
func (f *syncCountingFile) SyncData() error { f.n.Add(1); return f.File.SyncData() }
func (f *syncCountingFile) SyncTo(length int64) (bool, error) {
	f.n.Add(1)
	return f.File.SyncTo(length)
}
