package bench

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// childAttr makes a broker child die with the bench process (Linux: parent-death signal).
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM} }

// selfCPU is the CPU time (user + system) the bench process has used so far; 0 if unknown.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// procCPU is the CPU time (user + system) process pid has used so far, from /proc/<pid>/stat
// (clock ticks of 10 ms); 0 if unknown.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name (field 2) is in parentheses and may hold spaces: fields count from the
	// last ')'. utime and stime are fields 14 and 15.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	fs := strings.Fields(string(b[i+1:]))
	if len(fs) < 13 {
		return 0
	}
	ut, err1 := strconv.ParseInt(fs[11], 10, 64)
	st, err2 := strconv.ParseInt(fs[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(ut+st) * 10 * time.Millisecond
}
