package mcpapps

// OwnedSessions is how many MCP sessions the server keeps an owner for.
func (s *Server) OwnedSessions() int { return s.sessions.size() }
