//go:build race

package server

// raceAllocFactor: the race detector roughly doubles what kmsg's struct slices cost (measured:
// 64× instead of 32×), so allocation bounds are scaled under -race.
const raceAllocFactor = 2
