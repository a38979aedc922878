package wire

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ErrMalformedHeader is returned when a request header cannot be parsed.
var ErrMalformedHeader = errors.New("wire: malformed request header")

// Header is a parsed Kafka request header (v1 or v2; v0 carried no client id and is treated as
// v1 with a null client id only for ControlledShutdown v0, which muster does not serve).
type Header struct {
	APIKey        int16
	APIVersion    int16
	CorrelationID int32
	ClientID      *string
	// Flexible reports whether the header is v2 (tagged fields), which also selects response
	// header v1 for every API but ApiVersions.
	Flexible bool
}

// ParseHeader splits a request frame into its header and body. The header version follows the
// request version's flexibility, as kmsg defines it; unknown keys are parsed as v1 so the caller
// can still answer with the correlation id. Malformed input returns ErrMalformedHeader.
func ParseHeader(frame []byte) (Header, []byte, error) {
	var h Header
	if len(frame) < 8 {
		return h, nil, fmt.Errorf("%w: %d bytes, need at least 8", ErrMalformedHeader, len(frame))
	}
	h.APIKey = int16(binary.BigEndian.Uint16(frame[0:]))
	h.APIVersion = int16(binary.BigEndian.Uint16(frame[2:]))
	h.CorrelationID = int32(binary.BigEndian.Uint32(frame[4:]))
	b := frame[8:]
	if len(b) < 2 {
		return h, nil, fmt.Errorf("%w: missing client id", ErrMalformedHeader)
	}
	n := int16(binary.BigEndian.Uint16(b))
	b = b[2:]
	switch {
	case n == -1:
	case n < -1 || int(n) > len(b):
		return h, nil, fmt.Errorf("%w: client id length %d with %d bytes left", ErrMalformedHeader, n, len(b))
	default:
		s := string(b[:n])
		h.ClientID = &s
		b = b[n:]
	}
	if req := kmsg.RequestForKey(h.APIKey); req != nil && h.APIVersion >= 0 {
		req.SetVersion(h.APIVersion)
		h.Flexible = req.IsFlexible()
	}
	if h.Flexible {
		var err error
		if b, err = skipTags(b); err != nil {
			return h, nil, err
		}
	}
	return h, b, nil
}

// skipTags skips a KIP-482 tagged-field section: uvarint count, then (uvarint tag, uvarint
// size, bytes) per field.
func skipTags(b []byte) ([]byte, error) {
	n, m := binary.Uvarint(b)
	if m <= 0 {
		return nil, fmt.Errorf("%w: bad tagged field count", ErrMalformedHeader)
	}
	b = b[m:]
	for i := uint64(0); i < n; i++ {
		if _, m = binary.Uvarint(b); m <= 0 {
			return nil, fmt.Errorf("%w: bad tag", ErrMalformedHeader)
		}
		b = b[m:]
		sz, m := binary.Uvarint(b)
		if m <= 0 || sz > uint64(len(b)-m) {
			return nil, fmt.Errorf("%w: bad tagged field size", ErrMalformedHeader)
		}
		b = b[m+int(sz):]
	}
	return b, nil
}

// AppendResponse appends one whole response frame: size, correlation id, the response header's
// empty tag section when flexible (response header v1), and the kmsg-encoded body. ApiVersions
// always uses response header v0 (KIP-511), whatever the request header was.
func AppendResponse(dst []byte, h Header, resp kmsg.Response) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = binary.BigEndian.AppendUint32(dst, uint32(h.CorrelationID))
	if h.Flexible && h.APIKey != 18 {
		dst = append(dst, 0)
	}
	dst = resp.AppendTo(dst)
	patchSize(dst, start)
	return dst
}
