package topodesc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/muster-io/muster/internal/streams/topology"
)

// DiskDirName is the directory under the broker data dir that holds the disk
// plugin's files.
const DiskDirName = "topology-descriptions"

const (
	diskTempPrefix   = ".tmp-"
	diskMaxHexLength = 100 // group ids up to this many bytes are hex-encoded in the name
	diskLockStripes  = 64
)

// Disk is the "disk" plugin: one file per group in dir, holding the group
// id, topology epoch and canonical JSON description (and the previous
// epoch's during a rolling upgrade, see Plugin). Writes are atomic and
// durable (temp file, fsync, rename, fsync of the directory), so a
// description survives a broker restart. File I/O runs on a fixed pool of
// workers; operations on one group are serialized.
//
// File name: "g-<hex of group id>.json" for ids up to 100 bytes, else
// "h-<sha256 of group id>.json" (the id inside the file is checked on read),
// so any group id is safe on any filesystem, including case-insensitive ones.
type Disk struct {
	dir      string
	maxBytes int
	pool     *pool
	locks    [diskLockStripes]sync.Mutex
}

type diskFile struct {
	Group       string          `json:"group"`
	Epoch       int32           `json:"epoch"`
	Description json.RawMessage `json:"description"`
	// Previous is the other epoch kept during a rolling topology upgrade (absent in files
	// written before muster kept two epochs).
	Previous *diskEpoch `json:"previous,omitempty"`
}

// diskEpoch is one more stored epoch of a group.
type diskEpoch struct {
	Epoch       int32           `json:"epoch"`
	Description json.RawMessage `json:"description"`
}

// epochs lists the file's epochs: the latest set first.
func (f *diskFile) epochs() []diskEpoch {
	out := []diskEpoch{{Epoch: f.Epoch, Description: f.Description}}
	if f.Previous != nil {
		out = append(out, *f.Previous)
	}
	return out
}

// readFile reads and checks groupID's file (nil when there is none); the group lock is held.
func (d *Disk) readFile(groupID string) (*diskFile, error) {
	body, err := os.ReadFile(filepath.Join(d.dir, FileName(groupID)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("topodesc: read %s: %w", FileName(groupID), err)
	}
	var f diskFile
	if err := json.Unmarshal(body, &f); err != nil {
		return nil, fmt.Errorf("topodesc: corrupt file %s: %w", FileName(groupID), err)
	}
	if f.Group != groupID {
		return nil, fmt.Errorf("topodesc: file %s belongs to group %q, not %q", FileName(groupID), f.Group, groupID)
	}
	return &f, nil
}

// NewDisk opens (creating it if needed) the plugin directory dir, removes
// stale temp files and starts workers goroutines with a queue of queue
// pending calls. maxBytes bounds a description's canonical JSON (<= 0: no
// limit).
func NewDisk(dir string, maxBytes, workers, queue int) (*Disk, error) {
	if dir == "" {
		return nil, errors.New("topodesc: disk plugin needs a directory")
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("topodesc: create %s: %w", dir, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("topodesc: read %s: %w", dir, err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), diskTempPrefix) {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	return &Disk{dir: dir, maxBytes: maxBytes, pool: newPool(workers, queue)}, nil
}

// Name returns "disk".
func (d *Disk) Name() string { return "disk" }

// Dir returns the directory holding the files.
func (d *Disk) Dir() string { return d.dir }

// FileName returns the file name (within Dir) used for groupID.
func FileName(groupID string) string {
	if len(groupID) <= diskMaxHexLength {
		return "g-" + hex.EncodeToString([]byte(groupID)) + ".json"
	}
	sum := sha256.Sum256([]byte(groupID))
	return "h-" + hex.EncodeToString(sum[:]) + ".json"
}

func (d *Disk) lock(groupID string) *sync.Mutex {
	h := fnv.New32a()
	_, _ = h.Write([]byte(groupID))
	return &d.locks[h.Sum32()%diskLockStripes]
}

// SetTopology durably writes d for groupID at topologyEpoch, keeping the
// highest other epoch of the group's file as the previous one (see Plugin).
func (d *Disk) SetTopology(ctx context.Context, groupID string, topologyEpoch int32, desc *topology.Description) <-chan error {
	data, err := checkSet(groupID, topologyEpoch, desc, d.maxBytes)
	if err != nil {
		return errDone(err)
	}
	return d.pool.runErr(func(ctx context.Context) error {
		mu := d.lock(groupID)
		mu.Lock()
		defer mu.Unlock()
		if err := ctx.Err(); err != nil {
			return err
		}
		f := diskFile{Group: groupID, Epoch: topologyEpoch, Description: data}
		// A corrupt old file only loses its previous epoch.
		if old, err := d.readFile(groupID); err == nil && old != nil {
			for _, e := range old.epochs() {
				if e.Epoch != topologyEpoch && (f.Previous == nil || e.Epoch > f.Previous.Epoch) {
					f.Previous = &diskEpoch{Epoch: e.Epoch, Description: e.Description}
				}
			}
		}
		body, err := json.Marshal(f)
		if err != nil {
			return err
		}
		return d.writeAtomic(FileName(groupID), body)
	}, ctx)
}

func (d *Disk) writeAtomic(name string, body []byte) (err error) {
	f, err := os.CreateTemp(d.dir, diskTempPrefix+"*")
	if err != nil {
		return fmt.Errorf("topodesc: create temp file: %w", err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = os.Remove(tmp)
		}
	}()
	if _, err = f.Write(body); err != nil {
		_ = f.Close()
		return fmt.Errorf("topodesc: write %s: %w", tmp, err)
	}
	if err = f.Sync(); err != nil {
		_ = f.Close()
		return fmt.Errorf("topodesc: sync %s: %w", tmp, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("topodesc: close %s: %w", tmp, err)
	}
	if err = os.Rename(tmp, filepath.Join(d.dir, name)); err != nil {
		return fmt.Errorf("topodesc: rename %s: %w", tmp, err)
	}
	return d.syncDir()
}

func (d *Disk) syncDir() error {
	dir, err := os.Open(d.dir)
	if err != nil {
		return fmt.Errorf("topodesc: open %s: %w", d.dir, err)
	}
	defer dir.Close()
	if err := dir.Sync(); err != nil {
		return fmt.Errorf("topodesc: sync %s: %w", d.dir, err)
	}
	return nil
}

// GetTopology reads groupID's file; (nil, nil) when there is none or it
// holds no such epoch. A corrupt file (bad JSON, wrong group, unknown node
// type) is reported as an error.
func (d *Disk) GetTopology(ctx context.Context, groupID string, topologyEpoch int32) <-chan GetResult {
	return d.pool.runGet(func(ctx context.Context) GetResult {
		mu := d.lock(groupID)
		mu.Lock()
		f, err := d.readFile(groupID)
		mu.Unlock()
		if err != nil || f == nil {
			return GetResult{Err: err}
		}
		for _, e := range f.epochs() {
			if e.Epoch != topologyEpoch {
				continue
			}
			desc, err := topology.Unmarshal(e.Description)
			if err != nil {
				return GetResult{Err: fmt.Errorf("topodesc: corrupt file %s: %w", FileName(groupID), err)}
			}
			return GetResult{Description: desc}
		}
		return GetResult{}
	}, ctx)
}

// StoredEpochs lists the epochs of groupID's file, ascending.
func (d *Disk) StoredEpochs(ctx context.Context, groupID string) <-chan EpochsResult {
	return d.pool.runEpochs(func(ctx context.Context) EpochsResult {
		mu := d.lock(groupID)
		mu.Lock()
		f, err := d.readFile(groupID)
		mu.Unlock()
		out := []int32{}
		if f != nil {
			for _, e := range f.epochs() {
				out = append(out, e.Epoch)
			}
		}
		slices.Sort(out)
		return EpochsResult{Epochs: out, Err: err}
	}, ctx)
}

// DeleteTopologyEpoch removes one epoch from groupID's file (the file when it
// was the last one); success when there is none.
func (d *Disk) DeleteTopologyEpoch(ctx context.Context, groupID string, topologyEpoch int32) <-chan error {
	return d.pool.runErr(func(ctx context.Context) error {
		mu := d.lock(groupID)
		mu.Lock()
		defer mu.Unlock()
		f, err := d.readFile(groupID)
		if err != nil || f == nil {
			return err
		}
		var left []diskEpoch
		for _, e := range f.epochs() {
			if e.Epoch != topologyEpoch {
				left = append(left, e)
			}
		}
		switch {
		case len(left) == len(f.epochs()):
			return nil
		case len(left) == 0:
			if err := os.Remove(filepath.Join(d.dir, FileName(groupID))); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("topodesc: remove %s: %w", FileName(groupID), err)
			}
			return d.syncDir()
		}
		body, err := json.Marshal(diskFile{Group: groupID, Epoch: left[0].Epoch, Description: left[0].Description})
		if err != nil {
			return err
		}
		return d.writeAtomic(FileName(groupID), body)
	}, ctx)
}

// DeleteTopology removes groupID's file; success when there is none.
func (d *Disk) DeleteTopology(ctx context.Context, groupID string) <-chan error {
	return d.pool.runErr(func(ctx context.Context) error {
		mu := d.lock(groupID)
		mu.Lock()
		defer mu.Unlock()
		err := os.Remove(filepath.Join(d.dir, FileName(groupID)))
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("topodesc: remove %s: %w", FileName(groupID), err)
		}
		return d.syncDir()
	}, ctx)
}

// Close stops the workers; queued calls complete with a context error and
// later calls deliver ErrClosed.
func (d *Disk) Close() error {
	d.pool.close()
	return nil
}
