package security

import "fmt"

// Reload re-reads every ACL from the store and publishes them (cluster mode: another node
// changed the shared store). Changes made here meanwhile wait for it.
func (a *StandardAuthorizer) Reload() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	stored, err := a.store.LoadACLs()
	if err != nil {
		return fmt.Errorf("reloading ACLs: %w", err)
	}
	m := make(map[[16]byte]*Binding, len(stored))
	for _, sb := range stored {
		b := sb.Binding
		m[sb.ID] = &b
	}
	a.ix.Store(buildIndex(m))
	return nil
}

// Reload re-reads every SCRAM credential from the store and publishes them (cluster mode).
func (s *ScramCredentials) Reload() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	creds, err := s.store.LoadScramCredentials()
	if err != nil {
		return fmt.Errorf("reloading SCRAM credentials: %w", err)
	}
	m := make(map[ScramKey]ScramCredential, len(creds))
	for _, c := range creds {
		m[ScramKey{c.User, c.Mechanism}] = c
	}
	s.snap.Store(&m)
	return nil
}
