// Package restart coordinates one broker restart shared by every scenario
// that asks for one: each participant (scenario@client) arrives at its
// restart point with Plan, the Gate announces a kill time once all
// participants have arrived or left (or a wait bound passed), restarts the
// broker at that time, and Wait hands every participant the same Window.
//
// The scenarios run side by side against one cluster, so a restart hits all
// of them; announcing the kill time in advance lets each scenario place its
// pending work (delays, timers, half messages) relative to the outage
// instead of hoping for a race to go its way.
package restart
