//go:build unix

package session

// Requests that may block for long (WAIT) run on goroutines of their own
// instead of in the request handler, so that a pending WAIT holds back no
// other request: this is where ptyplex departs from the seed protocol's
// strictly sequential model (see PROTOCOL.md). Every other request is still
// executed by the one handler in arrival order. A connection carries a
// single request, so the order of requests on one connection is kept
// trivially.

// goAsync answers r with what run returns, on a goroutine that Serve joins
// before it returns. run must return promptly once d.done is closed.
func (d *Daemon) goAsync(r *request, run func() (any, error)) {
	d.async.Add(1)
	go func() {
		defer d.async.Done()
		data, err := run()
		if err == errClientGone || err == errAnswered {
			r.conn.Close()
			return
		}
		respond(r.conn, data, err)
	}()
}
