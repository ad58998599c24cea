package restart

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
)

// Window is one broker restart as the scenarios see it.
type Window struct {
	KillAt time.Time // announced by Plan: the broker is stopped at this instant
	Down   time.Time // the broker process was gone
	Up     time.Time // it answered again and the name server routed it
}

// Func stops the broker at killAt, brings it back and returns the window.
// topics are the scenarios' topics that must be routed again.
type Func func(ctx context.Context, killAt time.Time, topics []string) (Window, error)

// ErrMissed is returned to a participant arriving after the restart began.
var ErrMissed = errors.New("restart: arrived after the shared restart was planned")

// Gate is a one-shot barrier followed by one broker restart.
type Gate struct {
	lead    time.Duration // announce → kill
	maxWait time.Duration // first arrival → plan even if others are missing
	do      Func
	ctx     context.Context

	mu      sync.Mutex
	waiting map[string]bool // guarded by mu: participants yet to arrive or leave
	arrived map[string]bool // guarded by mu
	topics  map[string]bool // guarded by mu
	timer   *time.Timer     // guarded by mu: the maxWait bound, once someone arrived
	planned bool            // guarded by mu
	closed  bool            // guarded by mu: no restart may start any more
	killAt  time.Time       // written before plannedC closes
	win     Window          // written before doneC closes
	err     error           // written before doneC closes

	plannedC chan struct{}
	doneC    chan struct{}
}

// NewGate returns a gate for the named participants. The restart runs under
// ctx; lead is the notice between the announcement and the kill, maxWait
// how long the first arrival waits for the others.
func NewGate(ctx context.Context, participants []string, lead, maxWait time.Duration, do Func) *Gate {
	g := &Gate{lead: lead, maxWait: maxWait, do: do, ctx: ctx,
		waiting: map[string]bool{}, arrived: map[string]bool{}, topics: map[string]bool{},
		plannedC: make(chan struct{}), doneC: make(chan struct{})}
	for _, p := range participants {
		g.waiting[p] = true
	}
	return g
}

// Plan registers who at its restart point (with the topics it needs routed
// afterwards) and blocks until the kill time is announced.
func (g *Gate) Plan(ctx context.Context, who string, topics []string) (time.Time, error) {
	g.mu.Lock()
	switch {
	case g.closed:
		g.mu.Unlock()
		return time.Time{}, fmt.Errorf("restart: gate closed (%s)", who)
	case g.planned:
		g.mu.Unlock()
		return time.Time{}, fmt.Errorf("%w (%s)", ErrMissed, who)
	case !g.waiting[who]:
		g.mu.Unlock()
		return time.Time{}, fmt.Errorf("restart: %s is not a participant or arrived twice", who)
	}
	delete(g.waiting, who)
	g.arrived[who] = true
	for _, t := range topics {
		g.topics[t] = true
	}
	if len(g.waiting) == 0 {
		g.planLocked()
	} else if g.timer == nil {
		g.timer = time.AfterFunc(g.maxWait, func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			if !g.planned && !g.closed {
				g.planLocked()
			}
		})
	}
	g.mu.Unlock()
	select {
	case <-g.plannedC:
		return g.killAt, nil
	case <-ctx.Done():
		return time.Time{}, fmt.Errorf("restart: %s waiting for the others: %w", who, ctx.Err())
	}
}

// Leave tells the gate who will not arrive (its scenario ended). Leaving
// after arriving changes nothing.
func (g *Gate) Leave(who string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.waiting[who] {
		return
	}
	delete(g.waiting, who)
	if len(g.waiting) == 0 && len(g.arrived) > 0 && !g.planned && !g.closed {
		g.planLocked()
	}
}

// planLocked announces the kill time and starts the restart. Needs mu.
func (g *Gate) planLocked() {
	g.planned = true
	if g.timer != nil {
		g.timer.Stop()
	}
	g.killAt = time.Now().Add(g.lead)
	var topics []string
	for t := range g.topics {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	close(g.plannedC)
	go func() {
		g.win, g.err = g.do(g.ctx, g.killAt, topics)
		g.win.KillAt = g.killAt
		close(g.doneC)
	}()
}

// Wait blocks until the broker is back and returns the window. Only a
// participant that planned may wait.
func (g *Gate) Wait(ctx context.Context, who string) (Window, error) {
	g.mu.Lock()
	ok := g.arrived[who]
	g.mu.Unlock()
	if !ok {
		return Window{}, fmt.Errorf("restart: %s waits without having planned", who)
	}
	select {
	case <-g.doneC:
		return g.win, g.err
	case <-ctx.Done():
		return Window{}, fmt.Errorf("restart: %s waiting for the broker: %w", who, ctx.Err())
	}
}

// Close waits for a started restart to finish (so the cluster is not torn
// down under it) and reports whether one ran.
func (g *Gate) Close() (ran bool) {
	g.mu.Lock()
	g.closed = true
	planned := g.planned
	if g.timer != nil {
		g.timer.Stop()
	}
	g.mu.Unlock()
	if planned {
		<-g.doneC
	}
	return planned
}

// Bind returns the view of the gate one participant uses.
func (g *Gate) Bind(who string) *Point { return &Point{g: g, who: who} }

// Point is one participant's handle on the gate.
type Point struct {
	g   *Gate
	who string
}

// Plan blocks until the kill time is announced (see Gate.Plan).
func (p *Point) Plan(ctx context.Context, topics ...string) (time.Time, error) {
	return p.g.Plan(ctx, p.who, topics)
}

// Wait blocks until the broker is back (see Gate.Wait).
func (p *Point) Wait(ctx context.Context) (Window, error) { return p.g.Wait(ctx, p.who) }
