package bench

import (
	"context"
	"os"
	"path/filepath"
	"time"
)

// rawFsync measures the filesystem's durable-write limit in dir: one goroutine appends
// blockBytes to a file and fsyncs it, back to back, for d (or maxOps). Requests are fsyncs.
func rawFsync(ctx context.Context, dir string, d time.Duration, maxOps int64, blockBytes int) Result {
	res := Result{Workload: WFsync, Target: "filesystem", Conns: 1, UnitName: "bytes"}
	f, err := os.CreateTemp(dir, "muster-bench-fsync-*")
	if err != nil {
		res.Skipped, res.Note = true, err.Error()
		return res
	}
	defer os.Remove(f.Name())
	defer f.Close()
	res.Note = "append " + itoa(blockBytes) + " B + fsync, 1 thread, in " + filepath.Clean(dir)
	block := make([]byte, blockBytes)
	var lat []time.Duration
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	start := time.Now()
	for ctx.Err() == nil && (maxOps <= 0 || int64(len(lat)) < maxOps) {
		t0 := time.Now()
		if _, err := f.Write(block); err != nil {
			res.Errors++
			break
		}
		if err := f.Sync(); err != nil {
			res.Errors++
			break
		}
		lat = append(lat, time.Since(t0))
	}
	res.Seconds = time.Since(start).Seconds()
	res.Requests = int64(len(lat))
	res.Units = res.Requests * int64(blockBytes)
	fillRates(&res, lat)
	return res
}
