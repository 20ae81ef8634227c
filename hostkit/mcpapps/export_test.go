package mcpapps

// OwnedSessions is how many MCP sessions the server keeps an owner for.
func (s *Server) OwnedSessions() int { return s.sessions.size() }

// InstallServers is how many users' install_app servers the server keeps.
func (s *Server) InstallServers() int {
	s.makers.mu.Lock()
	defer s.makers.mu.Unlock()
	return len(s.makers.users)
}
