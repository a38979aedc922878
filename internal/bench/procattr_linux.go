package bench

import "syscall"

// childAttr makes a broker child die with the bench process (Linux: parent-death signal).
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM} }
