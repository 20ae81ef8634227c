package netgate

import (
	"sync"
	"time"
)

// limiter is the per-app rate ceiling: at most perMinute request starts in
// any sliding minute (counted in one-second buckets) and at most inFlight at
// once. A request over either is refused at once, never queued.
type limiter struct {
	mu        sync.Mutex
	perMinute int
	inFlight  int
	apps      map[string]*appRate
}

type appRate struct {
	buckets  [60]int   // starts per second
	stamps   [60]int64 // the unix second each bucket counts
	inFlight int
}

// inFlightRetry is the retryAfter sent when the in-flight ceiling is hit:
// the limiter cannot know when a running request ends.
const inFlightRetry = 250 * time.Millisecond

func newLimiter(perMinute, inFlight int) *limiter {
	return &limiter{perMinute: perMinute, inFlight: inFlight, apps: map[string]*appRate{}}
}

// acquire admits one request for app at now, or says how long to wait.
func (l *limiter) acquire(app string, now time.Time) (release func(), retryAfter time.Duration, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.apps[app]
	if r == nil {
		r = &appRate{}
		l.apps[app] = r
	}
	sec := now.Unix()
	total := 0
	oldest := int64(-1)
	for i := range r.buckets {
		if r.stamps[i] <= sec-60 {
			r.buckets[i] = 0
			continue
		}
		total += r.buckets[i]
		if r.buckets[i] > 0 && (oldest < 0 || r.stamps[i] < oldest) {
			oldest = r.stamps[i]
		}
	}
	if total >= l.perMinute {
		// The oldest second's starts leave the window 60 s after it began.
		wait := time.Unix(oldest+60, 0).Sub(now)
		if wait < time.Millisecond {
			wait = time.Millisecond
		}
		return nil, wait, false
	}
	if r.inFlight >= l.inFlight {
		return nil, inFlightRetry, false
	}
	i := sec % 60
	if r.stamps[i] != sec {
		r.stamps[i], r.buckets[i] = sec, 0
	}
	r.buckets[i]++
	r.inFlight++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			r.inFlight--
			l.mu.Unlock()
		})
	}, 0, true
}

// rateKey is the limiter's key for app: its key for the one local user,
// the user and the key otherwise (each user has the ceiling of their own).
func rateKey(app App) string {
	if app.User == "" {
		return app.Key
	}
	return app.User + "\x00" + app.Key
}
