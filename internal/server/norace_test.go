//go:build !race

package server

const raceAllocFactor = 1
