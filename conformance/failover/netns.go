package failover

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// Prefix names every namespace, bridge and veth the suite creates (the
// startup sweep removes only its leftovers). FAILOVER_NETNS_PREFIX (at
// most 6 characters: veth names end within 15) and FAILOVER_SUBNET (the
// first two octets, default 10.77) let a second suite run beside one with
// the defaults: pick a prefix that does not start with "rgfo-".
var Prefix = envDefault("FAILOVER_NETNS_PREFIX", "rgfo-")

// subnetBase is the first two octets of every address of the suite.
var subnetBase = envDefault("FAILOVER_SUBNET", "10.77")

func envDefault(k, d string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return d
}

// Network names and their /24 subnets (third octet).
const (
	NetData = "d" // name server, brokers, clients
	NetCtl  = "c" // controllers, brokers
	NetHA   = "h" // brokers only
)

var subnet = map[string]int{NetData: 0, NetCtl: 1, NetHA: 2}

// RootDataIP is the root namespace's address on the data bridge (clients).
var RootDataIP = subnetBase + ".0.1"

func ipcmd(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// Topology is the set of namespaces and links of one suite run.
type Topology struct {
	nodes []string
	hosts map[string]int      // node → host part
	nets  map[string][]string // node → its nets
}

func bridge(net string) string { return Prefix + "br" + net }

// NS is the namespace of node.
func NS(node string) string { return Prefix + node }

// Link is the root-side veth of node on net.
func Link(node, net string) string { return Prefix + node + "-" + net }

// Addr is node's address on net: 10.77.<net>.<host> (FAILOVER_SUBNET).
func Addr(net string, host int) string { return fmt.Sprintf("%s.%d.%d", subnetBase, subnet[net], host) }

// Sweep removes every namespace and link left by an earlier run, and
// kills the processes still inside those namespaces.
func Sweep() {
	if out, err := exec.Command("ip", "netns", "list").Output(); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) > 0 && strings.HasPrefix(f[0], Prefix) {
				// Processes of a crashed run still inside (ours: only
				// the suite starts processes in these namespaces).
				if pids, err := exec.Command("ip", "netns", "pids", f[0]).Output(); err == nil {
					for _, p := range strings.Fields(string(pids)) {
						if pid, err := strconv.Atoi(p); err == nil && pid > 1 {
							_ = syscall.Kill(pid, syscall.SIGKILL)
						}
					}
				}
				_ = ipcmd("netns", "del", f[0])
			}
		}
	}
	if out, err := exec.Command("ip", "-o", "link", "show").Output(); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) < 2 {
				continue
			}
			name, _, _ := strings.Cut(strings.TrimSuffix(f[1], ":"), "@")
			if strings.HasPrefix(name, Prefix) {
				_ = ipcmd("link", "del", name)
			}
		}
	}
}

// Available says why namespaces cannot be used, or "".
func Available() string {
	if _, err := exec.LookPath("ip"); err != nil {
		return "no ip command (iproute2)"
	}
	probe := Prefix + "probe"
	if err := ipcmd("netns", "add", probe); err != nil {
		return "cannot create a network namespace (needs root): " + err.Error()
	}
	_ = ipcmd("netns", "del", probe)
	return ""
}

// NewTopology creates the three bridges; nodes are added with AddNode.
func NewTopology() (*Topology, error) {
	Sweep()
	t := &Topology{hosts: map[string]int{}, nets: map[string][]string{}}
	for _, n := range []string{NetData, NetCtl, NetHA} {
		if err := ipcmd("link", "add", bridge(n), "type", "bridge"); err != nil {
			t.Close()
			return nil, err
		}
		if err := ipcmd("link", "set", bridge(n), "up"); err != nil {
			t.Close()
			return nil, err
		}
	}
	if err := ipcmd("addr", "add", RootDataIP+"/24", "dev", bridge(NetData)); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// AddNode creates node's namespace with one veth per net, address
// 10.77.<net>.<host>/24 inside (interface e<net>).
func (t *Topology) AddNode(node string, host int, nets ...string) error {
	ns := NS(node)
	if err := ipcmd("netns", "add", ns); err != nil {
		return err
	}
	t.nodes = append(t.nodes, node)
	if err := ipcmd("-n", ns, "link", "set", "lo", "up"); err != nil {
		return err
	}
	for _, n := range nets {
		in := "e" + n
		steps := [][]string{
			{"link", "add", Link(node, n), "type", "veth", "peer", "name", in, "netns", ns},
			{"link", "set", Link(node, n), "master", bridge(n)},
			{"link", "set", Link(node, n), "up"},
			{"-n", ns, "addr", "add", Addr(n, host) + "/24", "dev", in},
			{"-n", ns, "link", "set", in, "up"},
		}
		for _, s := range steps {
			if err := ipcmd(s...); err != nil {
				return err
			}
		}
	}
	t.hosts[node], t.nets[node] = host, nets
	return t.routeControllers(node)
}

func has(nets []string, n string) bool {
	for _, x := range nets {
		if x == n {
			return true
		}
	}
	return false
}

// routeControllers lets nodes that are only on the ctl net (controllers)
// reach the data address of nodes on both nets (brokers) over the ctl
// link: a controller sends NOTIFY_BROKER_ROLE_CHANGED to the address a
// broker registered (brokerIP1, on the data net), as in a deployment
// where controllers can reach brokers. The route goes through the
// broker's ctl link, so taking that link down still cuts the broker off
// from the controllers both ways.
func (t *Topology) routeControllers(node string) error {
	for _, other := range t.nodes {
		ctlOnly, broker := other, node
		if has(t.nets[node], NetCtl) && !has(t.nets[node], NetData) {
			ctlOnly, broker = node, other
		}
		if ctlOnly == broker || !has(t.nets[ctlOnly], NetCtl) || has(t.nets[ctlOnly], NetData) ||
			!has(t.nets[broker], NetCtl) || !has(t.nets[broker], NetData) {
			continue
		}
		h := t.hosts[broker]
		if err := ipcmd("-n", NS(ctlOnly), "route", "add", Addr(NetData, h)+"/32", "via", Addr(NetCtl, h)); err != nil {
			return err
		}
	}
	return nil
}

// SetLink takes node's link on net down (a partition) or up (healed).
func (t *Topology) SetLink(node, net string, up bool) error {
	state := "down"
	if up {
		state = "up"
	}
	return ipcmd("link", "set", Link(node, net), state)
}

// Close removes every namespace and link (deleting a namespace deletes
// its veth ends, which deletes their root-side peers).
func (t *Topology) Close() {
	for _, n := range t.nodes {
		_ = ipcmd("netns", "del", NS(n))
	}
	for _, n := range []string{NetData, NetCtl, NetHA} {
		_ = ipcmd("link", "del", bridge(n))
	}
	Sweep()
}
