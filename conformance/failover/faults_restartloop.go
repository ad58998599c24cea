package failover

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Bounds of restart-loop.
const (
	loopRounds  = 5
	loopMaxTime = 4 * time.Minute // the whole loop
	loopBack    = 60 * time.Second
	loopDownMin = 200 * time.Millisecond
	loopDownMax = 2 * time.Second
)

// restartLoop kills a random node (a controller, the name server or a
// broker, the master included) with SIGKILL, leaves it down a random
// while and starts it again, loopRounds times; a round starts once the
// restarted node answers and a master is named and answers.
func restartLoop(ctx context.Context, s *Set, m *Node, _ time.Duration, logf func(string, ...any), mark func()) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, loopMaxTime)
	defer cancel()
	var t0 time.Time
	var done []string
	cur := m
	for round := range loopRounds {
		all := s.All()
		n := all[rand.IntN(len(all))]
		down := loopDownMin + rand.N(loopDownMax-loopDownMin)
		role := ""
		if n == cur {
			role = " (master)"
		}
		start := time.Now()
		if round == 0 {
			t0 = start
		}
		n.Kill9()
		if round == 0 {
			mark()
		}
		waitFor(ctx, down) // the fault's down time
		if err := n.Start(); err != nil {
			return t0, err
		}
		nm, err := s.WaitBack(ctx, n, loopBack)
		if err != nil {
			return t0, fmt.Errorf("round %d (%s%s down %v): %w", round, n.Name, role, down.Round(time.Millisecond), err)
		}
		done = append(done, fmt.Sprintf("%s%s", n.Name, role))
		logf("restart-loop round %d: killed %s%s, down %v, back after %v, master %s",
			round, n.Name, role, down.Round(time.Millisecond), time.Since(start).Round(time.Millisecond), nm.Name)
		cur = nm
	}
	logf("restart-loop restarted: %s", strings.Join(done, ", "))
	return t0, nil
}
