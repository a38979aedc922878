//go:build !linux

package bench

import (
	"syscall"
	"time"
)

// childAttr: no parent-death signal outside Linux; kfake-serve still exits on stdin EOF.
func childAttr() *syscall.SysProcAttr { return nil }

// selfCPU is unknown outside Linux.
func selfCPU() time.Duration { return 0 }

// procCPU is 0: not measured off Linux.
func procCPU(int) time.Duration { return 0 }
