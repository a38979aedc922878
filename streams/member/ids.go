package member

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"strconv"
)

// newUUID returns a random RFC 4122 version-4 UUID in its canonical
// 8-4-4-4-12 form (as Java's UUID.randomUUID().toString(), which Kafka
// Streams uses for its process id).
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// endpoint is a parsed "host:port".
type endpoint struct {
	host string
	port uint16
}

func parseEndpoint(s string) (endpoint, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return endpoint{}, fmt.Errorf("member: UserEndpoint %q: %w", s, err)
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil || host == "" {
		return endpoint{}, fmt.Errorf("member: UserEndpoint %q: want host:port with a port in 0-65535", s)
	}
	return endpoint{host: host, port: uint16(p)}, nil
}
