package security

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"errors"
	"fmt"
	"hash"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kerr"
)

// ScramMechanism is a SCRAM mechanism as AlterUserScramCredentials numbers it.
type ScramMechanism int8

// The SCRAM mechanisms (ScramMechanism.java).
const (
	ScramSHA256 ScramMechanism = 1
	ScramSHA512 ScramMechanism = 2
)

// SCRAM iteration bounds: ScramMechanism's minimum and ScramControlManager's MAX_ITERATIONS.
const (
	ScramMinIterations = 4096
	ScramMaxIterations = 16384
)

// String is the SASL mechanism name.
func (m ScramMechanism) String() string {
	switch m {
	case ScramSHA256:
		return "SCRAM-SHA-256"
	case ScramSHA512:
		return "SCRAM-SHA-512"
	}
	return fmt.Sprintf("UNKNOWN(%d)", int8(m))
}

// Hash is the mechanism's hash function (nil for an unknown mechanism).
func (m ScramMechanism) Hash() func() hash.Hash {
	switch m {
	case ScramSHA256:
		return sha256.New
	case ScramSHA512:
		return sha512.New
	}
	return nil
}

// ParseScramMechanism returns the mechanism named s ("SCRAM-SHA-256").
func ParseScramMechanism(s string) (ScramMechanism, bool) {
	switch upper(s) {
	case "SCRAM-SHA-256":
		return ScramSHA256, true
	case "SCRAM-SHA-512":
		return ScramSHA512, true
	}
	return 0, false
}

// ScramCredential is what the broker keeps of a SCRAM password: the salt, the iteration count and
// the StoredKey and ServerKey derived from the salted password (RFC 5802). The password itself is
// never stored.
type ScramCredential struct {
	User       string
	Mechanism  ScramMechanism
	Salt       []byte
	StoredKey  []byte
	ServerKey  []byte
	Iterations int32
}

// ScramCredentialFromSalted derives the stored keys from a SaltedPassword, as
// AlterUserScramCredentials carries it (ScramFormatter): StoredKey = H(HMAC(salted, "Client
// Key")), ServerKey = HMAC(salted, "Server Key").
func ScramCredentialFromSalted(user string, m ScramMechanism, salt, salted []byte, iterations int32) ScramCredential {
	h := m.Hash()
	mac := func(key []byte, msg string) []byte {
		x := hmac.New(h, key)
		x.Write([]byte(msg))
		return x.Sum(nil)
	}
	d := h()
	d.Write(mac(salted, "Client Key"))
	return ScramCredential{
		User: user, Mechanism: m, Salt: slices.Clone(salt), Iterations: iterations,
		StoredKey: d.Sum(nil), ServerKey: mac(salted, "Server Key"),
	}
}

// SaltPassword is SCRAM's Hi(): PBKDF2 with the mechanism's HMAC over the raw UTF-8 password
// (Kafka's ScramFormatter does no SASLprep).
func SaltPassword(m ScramMechanism, password string, salt []byte, iterations int32) ([]byte, error) {
	h := m.Hash()
	if h == nil {
		return nil, fmt.Errorf("unknown SCRAM mechanism %d", m)
	}
	return pbkdf2.Key(h, password, salt, int(iterations), h().Size())
}

// NewScramCredential derives a credential for password with a fresh random salt (the offline
// bootstrap and the CLI; on the wire the client derives it).
func NewScramCredential(user string, m ScramMechanism, password string, iterations int32) (ScramCredential, error) {
	if err := checkIterations(iterations); err != nil {
		return ScramCredential{}, err
	}
	salt := make([]byte, 32)
	rand.Read(salt)
	salted, err := SaltPassword(m, password, salt, iterations)
	if err != nil {
		return ScramCredential{}, err
	}
	return ScramCredentialFromSalted(user, m, salt, salted, iterations), nil
}

func checkIterations(n int32) error {
	if n < ScramMinIterations {
		return fmt.Errorf("Too few iterations")
	}
	if n > ScramMaxIterations {
		return fmt.Errorf("Too many iterations")
	}
	return nil
}

// ScramCredentials holds every SCRAM credential in an immutable snapshot (lookups take no lock),
// backed by a Store.
type ScramCredentials struct {
	store Store
	mu    sync.Mutex
	snap  atomic.Pointer[map[ScramKey]ScramCredential]
}

// NewScramCredentials loads the credentials of st.
func NewScramCredentials(st Store) (*ScramCredentials, error) {
	creds, err := st.LoadScramCredentials()
	if err != nil {
		return nil, fmt.Errorf("loading SCRAM credentials: %w", err)
	}
	m := make(map[ScramKey]ScramCredential, len(creds))
	for _, c := range creds {
		m[ScramKey{c.User, c.Mechanism}] = c
	}
	s := &ScramCredentials{store: st}
	s.snap.Store(&m)
	return s, nil
}

// Lookup returns the credential of user for m.
func (s *ScramCredentials) Lookup(user string, m ScramMechanism) (ScramCredential, bool) {
	c, ok := (*s.snap.Load())[ScramKey{user, m}]
	return c, ok
}

// ScramDeletion and ScramUpsertion are AlterUserScramCredentials' entries.
type ScramDeletion struct {
	User      string
	Mechanism ScramMechanism
}

// ScramUpsertion carries the client-computed SaltedPassword.
type ScramUpsertion struct {
	User           string
	Mechanism      ScramMechanism
	Iterations     int32
	Salt           []byte
	SaltedPassword []byte
}

// ScramResult is the outcome for one user.
type ScramResult struct {
	User    string
	Err     *kerr.Error
	Message string
}

// Alter applies AlterUserScramCredentials (ScramControlManager.alterCredentials): one result per
// user named, sorted by user. A user whose credential for one mechanism is named more than once
// (deleted and upserted, or upserted twice) gets DUPLICATE_RESOURCE; an empty name
// UNACCEPTABLE_CREDENTIAL; an unknown mechanism UNSUPPORTED_SASL_MECHANISM; iterations outside
// [4096, 16384] UNACCEPTABLE_CREDENTIAL; deleting a missing credential RESOURCE_NOT_FOUND. A user
// whose entries all pass is changed; the changes of one call are written in one durable batch.
func (s *ScramCredentials) Alter(dels []ScramDeletion, ups []ScramUpsertion) ([]ScramResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := *s.snap.Load()
	count := map[string]int{}
	pairs := map[ScramKey]int{}
	for _, d := range dels {
		count[d.User]++
		pairs[ScramKey{d.User, d.Mechanism}]++
	}
	for _, u := range ups {
		count[u.User]++
		pairs[ScramKey{u.User, u.Mechanism}]++
	}
	failed := map[string]ScramResult{}
	fail := func(user string, e *kerr.Error, msg string) {
		if _, ok := failed[user]; !ok {
			failed[user] = ScramResult{User: user, Err: e, Message: msg}
		}
	}
	for k, n := range pairs {
		if n > 1 {
			fail(k.User, kerr.DuplicateResource, "A user credential cannot be altered twice in the same request")
		}
	}
	var remove []ScramKey
	var upsert []ScramCredential
	for _, d := range dels {
		switch {
		case d.User == "":
			fail(d.User, kerr.UnacceptableCredential, "Username must not be empty")
		case d.Mechanism.Hash() == nil:
			fail(d.User, kerr.UnsupportedSaslMechanism, "Unknown SCRAM mechanism")
		default:
			if _, ok := cur[ScramKey{d.User, d.Mechanism}]; !ok {
				fail(d.User, kerr.ResourceNotFound, "Attempt to delete a user credential that does not exist")
			}
		}
		remove = append(remove, ScramKey{d.User, d.Mechanism})
	}
	for _, u := range ups {
		switch {
		case u.User == "":
			fail(u.User, kerr.UnacceptableCredential, "Username must not be empty")
		case u.Mechanism.Hash() == nil:
			fail(u.User, kerr.UnsupportedSaslMechanism, "Unknown SCRAM mechanism")
		case checkIterations(u.Iterations) != nil:
			fail(u.User, kerr.UnacceptableCredential, checkIterations(u.Iterations).Error())
		case len(u.Salt) == 0 || len(u.SaltedPassword) == 0:
			fail(u.User, kerr.UnacceptableCredential, "Salt and salted password must not be empty")
		default:
			upsert = append(upsert, ScramCredentialFromSalted(u.User, u.Mechanism, u.Salt, u.SaltedPassword, u.Iterations))
		}
	}
	remove = slices.DeleteFunc(remove, func(k ScramKey) bool { _, bad := failed[k.User]; return bad })
	upsert = slices.DeleteFunc(upsert, func(c ScramCredential) bool { _, bad := failed[c.User]; return bad })
	if len(remove)+len(upsert) > 0 {
		if err := s.store.ChangeScramCredentials(upsert, remove); err != nil {
			return nil, err
		}
		next := make(map[ScramKey]ScramCredential, len(cur)+len(upsert))
		for k, v := range cur {
			next[k] = v
		}
		for _, k := range remove {
			delete(next, k)
		}
		for _, c := range upsert {
			next[ScramKey{c.User, c.Mechanism}] = c
		}
		s.snap.Store(&next)
	}
	out := make([]ScramResult, 0, len(count))
	for user := range count {
		if r, ok := failed[user]; ok {
			out = append(out, r)
		} else {
			out = append(out, ScramResult{User: user})
		}
	}
	slices.SortFunc(out, func(a, b ScramResult) int {
		if a.User < b.User {
			return -1
		}
		if a.User > b.User {
			return 1
		}
		return 0
	})
	return out, nil
}

// ScramInfo is what DescribeUserScramCredentials tells of a credential: never its salt or keys.
type ScramInfo struct {
	Mechanism  ScramMechanism
	Iterations int32
}

// ErrNoSuchUser is Describe's answer for a user without credentials.
var ErrNoSuchUser = errors.New("user has no SCRAM credential")

// Describe lists the credentials of users (all users when users is empty), sorted by user then
// mechanism. A user without credentials is in missing.
func (s *ScramCredentials) Describe(users []string) (found map[string][]ScramInfo, missing []string) {
	cur := *s.snap.Load()
	found = map[string][]ScramInfo{}
	for k, c := range cur {
		if len(users) == 0 || slices.Contains(users, k.User) {
			found[k.User] = append(found[k.User], ScramInfo{Mechanism: c.Mechanism, Iterations: c.Iterations})
		}
	}
	for _, infos := range found {
		slices.SortFunc(infos, func(a, b ScramInfo) int { return int(a.Mechanism) - int(b.Mechanism) })
	}
	for _, u := range users {
		if _, ok := found[u]; !ok && !slices.Contains(missing, u) {
			missing = append(missing, u)
		}
	}
	return found, missing
}

// Upsert stores credentials directly (the offline bootstrap, `muster storage format --add-scram`).
func (s *ScramCredentials) Upsert(creds ...ScramCredential) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.store.ChangeScramCredentials(creds, nil); err != nil {
		return err
	}
	cur := *s.snap.Load()
	next := make(map[ScramKey]ScramCredential, len(cur)+len(creds))
	for k, v := range cur {
		next[k] = v
	}
	for _, c := range creds {
		next[ScramKey{c.User, c.Mechanism}] = c
	}
	s.snap.Store(&next)
	return nil
}
