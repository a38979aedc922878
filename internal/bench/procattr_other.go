//go:build !linux

package bench

import "syscall"

// childAttr: no parent-death signal outside Linux; kfake-serve still exits on stdin EOF.
func childAttr() *syscall.SysProcAttr { return nil }
