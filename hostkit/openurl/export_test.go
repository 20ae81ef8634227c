package openurl

// Joined is how many requests wait on app's question about url.
func Joined(o *Opener, app, url string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	if q := o.asking[app+"\x00"+url]; q != nil {
		return q.joined
	}
	return 0
}
