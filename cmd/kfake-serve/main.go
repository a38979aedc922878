// Command kfake-serve runs franz-go's in-memory fake Kafka cluster (pkg/kfake) as its own process,
// so muster-bench can compare muster with it like for like (both out of process, both over
// loopback TCP). It is a benchmark helper only and not part of the muster binary.
//
//	kfake-serve --listen 127.0.0.1:9093
//
// It prints "ready <addr>" on stdout once listening and runs until SIGTERM/SIGINT or until its
// stdin is closed (so it dies with its parent). kfake keeps all state in memory and never fsyncs.
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "host:port of the single kfake broker (port 0 = any)")
	watchStdin := flag.Bool("exit-on-stdin-eof", true, "exit when stdin is closed (the parent went away)")
	flag.Parse()
	host, ps, err := net.SplitHostPort(*listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfake-serve: --listen:", err)
		os.Exit(2)
	}
	port, err := strconv.Atoi(ps)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfake-serve: --listen: bad port", ps)
		os.Exit(2)
	}
	opts := []kfake.Opt{kfake.NumBrokers(1), kfake.Ports(port)}
	if host != "" {
		opts = append(opts, kfake.ListenFn(func(network, _ string) (net.Listener, error) {
			return net.Listen(network, net.JoinHostPort(host, strconv.Itoa(port)))
		}))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfake-serve:", err)
		os.Exit(1)
	}
	defer c.Close()
	fmt.Println("ready", c.ListenAddrs()[0])

	done := make(chan os.Signal, 1)
	signal.Notify(done, syscall.SIGTERM, syscall.SIGINT)
	if *watchStdin {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			done <- syscall.SIGTERM
		}()
	}
	<-done
}
