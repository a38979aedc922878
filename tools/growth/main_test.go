package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestQuickRun keeps the growth tool from rotting: small sizes, finite positive slopes, files written.
func TestQuickRun(t *testing.T) {
	series := Measure(true)
	dir := t.TempDir()
	if err := Write(series, dir); err != nil {
		t.Fatal(err)
	}
	for _, s := range series {
		if sl := s.Slope(); sl != sl || len(s.X) < 3 {
			t.Fatalf("%s: bad slope %v over %d points", s.Name, sl, len(s.X))
		}
		if _, err := os.Stat(filepath.Join(dir, slug(s.Name)+".svg")); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSlopeOfLinearAndQuadratic(t *testing.T) {
	lin := Series{X: []float64{1, 2, 4, 8}, Y: []float64{3, 6, 12, 24}}
	quad := Series{X: []float64{1, 2, 4, 8}, Y: []float64{1, 4, 16, 64}}
	if s := lin.Slope(); s < 0.99 || s > 1.01 {
		t.Fatalf("linear slope %v", s)
	}
	if s := quad.Slope(); s < 1.99 || s > 2.01 {
		t.Fatalf("quadratic slope %v", s)
	}
}
