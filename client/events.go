package client

import (
	"fmt"
	"sync"
	"time"
)

// Events of a reconnecting client, and the queue that hands them to
// ReconnectPolicy.OnEvent in order.

// EventKind says what an Event reports.
type EventKind int

const (
	// EventDisconnected: the transport ended without Close; Err says
	// why. Terminals stay open and writes queue from now on.
	EventDisconnected EventKind = iota + 1
	// EventReconnectFailed: attempt Attempt failed with Err; another
	// follows after a delay, or GaveUp after the last.
	EventReconnectFailed
	// EventLost: bytes of terminal TerminalID fell out of the server's
	// journal while the connection was down (Lost of them); its Read
	// continues with the server's repaint of the screen in their place.
	EventLost
	// EventReconnected: attempt Attempt succeeded, After the drop; every
	// terminal was reattached and the queued input sent.
	EventReconnected
	// EventGaveUp: the attempts are spent (Err is the last one's error);
	// the client ends and its terminals with it.
	EventGaveUp
)

func (k EventKind) String() string {
	switch k {
	case EventDisconnected:
		return "disconnected"
	case EventReconnectFailed:
		return "reconnect failed"
	case EventLost:
		return "lost"
	case EventReconnected:
		return "reconnected"
	case EventGaveUp:
		return "gave up"
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// Event is something that happened to a reconnecting Client's connection.
type Event struct {
	Kind       EventKind
	Err        error         // Disconnected, ReconnectFailed, GaveUp: why
	Attempt    int           // ReconnectFailed, Reconnected: which attempt, from 1
	After      time.Duration // Reconnected: time since the drop was noticed
	TerminalID string        // Lost
	Lost       uint64        // Lost: bytes the terminal's stream skips
}

func (e Event) String() string {
	switch e.Kind {
	case EventReconnected:
		return fmt.Sprintf("reconnected (attempt %d, after %v)", e.Attempt, e.After.Round(time.Millisecond))
	case EventLost:
		return fmt.Sprintf("terminal %q lost %d bytes", e.TerminalID, e.Lost)
	case EventReconnectFailed:
		return fmt.Sprintf("reconnect attempt %d failed: %v", e.Attempt, e.Err)
	}
	if e.Err != nil {
		return fmt.Sprintf("%v: %v", e.Kind, e.Err)
	}
	return e.Kind.String()
}

// eventQueue hands events to OnEvent in order from one goroutine, so that
// a slow or blocking callback never holds up the client.
type eventQueue struct {
	fn   func(Event)
	mu   sync.Mutex
	q    []Event
	wake chan struct{}
}

func newEventQueue(fn func(Event)) *eventQueue {
	if fn == nil {
		return nil
	}
	e := &eventQueue{fn: fn, wake: make(chan struct{}, 1)}
	go e.run()
	return e
}

func (e *eventQueue) emit(ev Event) {
	if e == nil {
		return
	}
	e.mu.Lock()
	e.q = append(e.q, ev)
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// run delivers events for the life of the process's use of the client;
// it ends after delivering GaveUp, the last event there can be, or when
// the client ends (close: see end).
func (e *eventQueue) run() {
	for range e.wake {
		for {
			e.mu.Lock()
			if len(e.q) == 0 {
				e.mu.Unlock()
				break
			}
			ev := e.q[0]
			e.q = e.q[1:]
			e.mu.Unlock()
			e.fn(ev)
		}
	}
}

// close ends run once the queued events were delivered.
func (e *eventQueue) close() {
	if e != nil {
		close(e.wake)
	}
}
