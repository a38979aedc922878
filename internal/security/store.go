package security

// StoredBinding is an ACL with its id (Kafka's AccessControlEntryRecord keeps a UUID per ACL).
type StoredBinding struct {
	ID      [16]byte
	Binding Binding
}

// ScramKey names one SCRAM credential: a user and a mechanism.
type ScramKey struct {
	User      string
	Mechanism ScramMechanism
}

// Store keeps ACLs and SCRAM credentials durably. The embedded default is Pebble
// (store.SecurityPebble); cluster mode shares them through PostgreSQL. A method returns only after
// its change is durable; each call is atomic.
type Store interface {
	LoadACLs() ([]StoredBinding, error)
	// ChangeACLs adds and removes ACLs in one atomic write.
	ChangeACLs(add []StoredBinding, remove [][16]byte) error
	LoadScramCredentials() ([]ScramCredential, error)
	// ChangeScramCredentials upserts and deletes credentials in one atomic write.
	ChangeScramCredentials(upsert []ScramCredential, remove []ScramKey) error
}

// MemoryStore is a Store that keeps nothing across restarts (tests, and brokers without a data
// dir).
type MemoryStore struct {
	acls  map[[16]byte]Binding
	creds map[ScramKey]ScramCredential
}

// LoadACLs implements Store.
func (m *MemoryStore) LoadACLs() ([]StoredBinding, error) {
	var out []StoredBinding
	for id, b := range m.acls {
		out = append(out, StoredBinding{ID: id, Binding: b})
	}
	return out, nil
}

// ChangeACLs implements Store.
func (m *MemoryStore) ChangeACLs(add []StoredBinding, remove [][16]byte) error {
	if m.acls == nil {
		m.acls = map[[16]byte]Binding{}
	}
	for _, id := range remove {
		delete(m.acls, id)
	}
	for _, sb := range add {
		m.acls[sb.ID] = sb.Binding
	}
	return nil
}

// LoadScramCredentials implements Store.
func (m *MemoryStore) LoadScramCredentials() ([]ScramCredential, error) {
	var out []ScramCredential
	for _, c := range m.creds {
		out = append(out, c)
	}
	return out, nil
}

// ChangeScramCredentials implements Store.
func (m *MemoryStore) ChangeScramCredentials(upsert []ScramCredential, remove []ScramKey) error {
	if m.creds == nil {
		m.creds = map[ScramKey]ScramCredential{}
	}
	for _, k := range remove {
		delete(m.creds, k)
	}
	for _, c := range upsert {
		m.creds[ScramKey{c.User, c.Mechanism}] = c
	}
	return nil
}
