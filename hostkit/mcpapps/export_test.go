package mcpapps

// OwnedSessions is how many MCP sessions the server keeps an owner for.
func (s *Server) OwnedSessions() int { return s.sessions.size() }

// InstallServers is how many users' install_app servers the server keeps.
func (s *Server) InstallServers() int {
	s.makers.mu.Lock()
	defer s.makers.mu.Unlock()
	return len(s.makers.users)
}

// Instances is how many instances user holds.
func (s *Server) Instances(user string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byUser[user])
}

// HoldInstance makes the instance of user's handle look busy (a tool call
// using it) until release is called, as a call that waits does.
func (s *Server) HoldInstance(t interface{ Fatal(...any) }, user, app, handle string) (release func()) {
	p, err := s.sign.verify(handle)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := s.instance(caller{handlePayload: handlePayload{App: app, Instance: p.Instance}, user: user})
	if err != nil {
		t.Fatal(err)
	}
	return inst.done
}
