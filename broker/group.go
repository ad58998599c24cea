package broker

import (
	"log/slog"
	"maps"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/codec/body"
)

// groupTable holds subscription groups (subscriptionGroup.json).
type groupTable struct {
	path string
	live *liveConfig // autoCreateSubscriptionGroup
	log  *slog.Logger
	pmu  sync.Mutex // serializes writes of the file

	mu      sync.RWMutex
	groups  map[string]body.SubscriptionGroupConfig // guarded by mu
	version body.TopicVersion                       // guarded by mu
}

// systemGroups are the groups Java 5.x's SubscriptionGroupManager.init
// creates at start, and whether each consumes in broadcast mode. (The
// other predefined names, such as CLIENT_INNER_PRODUCER, are reserved but
// not created.)
var systemGroups = []struct {
	name      string
	broadcast bool
}{
	{"TOOLS_CONSUMER", false},
	{"FILTERSRV_CONSUMER", false},
	{"SELF_TEST_C_GROUP", false},
	{"CID_ONS-HTTP-PROXY", true},
	{"CID_ONSAPI_PULL", true},
	{"CID_ONSAPI_PERMISSION", true},
	{"CID_ONSAPI_OWNER", true},
	{"CID_RMQ_SYS_TRANS", true},
}

func newGroupTable(cfg *Config, live *liveConfig, log *slog.Logger) *groupTable {
	g := &groupTable{
		path:    filepath.Join(cfg.StorePathRootDir, "config", "subscriptionGroup.json"),
		live:    live,
		log:     log,
		groups:  make(map[string]body.SubscriptionGroupConfig),
		version: body.TopicVersion{Timestamp: time.Now().UnixMilli()},
	}
	for _, sys := range systemGroups {
		sg := body.NewSubscriptionGroupConfig(sys.name)
		sg.ConsumeBroadcastEnable = sys.broadcast
		g.groups[sys.name] = sg
	}
	return g
}

func (g *groupTable) load() error {
	return loadConfigFile(g.path, "subscription groups", body.DecodeSubscriptionGroupFile, func(f body.SubscriptionGroupFile) {
		g.mu.Lock()
		defer g.mu.Unlock()
		maps.Copy(g.groups, f.SubscriptionGroupTable)
		if f.DataVersion.Timestamp != 0 {
			g.version = f.DataVersion
		}
	})
}

func (g *groupTable) get(name string) (body.SubscriptionGroupConfig, bool) {
	g.mu.RLock()
	sg, ok := g.groups[name]
	g.mu.RUnlock()
	return sg, ok
}

// find returns the group, creating it with defaults when auto-creation is
// on (findSubscriptionGroupConfig).
func (g *groupTable) find(name string) (body.SubscriptionGroupConfig, bool) {
	if sg, ok := g.get(name); ok {
		return sg, true
	}
	if !g.live.autoCreateGroup.Load() || validateGroup(name) != "" {
		return body.SubscriptionGroupConfig{}, false
	}
	g.mu.Lock()
	sg, ok := g.groups[name]
	if !ok {
		name = strings.Clone(name) // names from requests alias their payload
		sg = body.NewSubscriptionGroupConfig(name)
		g.groups[name] = sg
		g.version.Counter++
		g.version.Timestamp = time.Now().UnixMilli()
	}
	g.mu.Unlock()
	if !ok {
		g.log.Info("subscription group auto-created", "group", name)
		if err := g.persist(); err != nil {
			g.log.Error("persist subscription groups", "err", err)
		}
	}
	return sg, true
}

func (g *groupTable) put(sg body.SubscriptionGroupConfig) error {
	g.mu.Lock()
	g.groups[sg.GroupName] = sg
	g.version.Counter++
	g.version.Timestamp = time.Now().UnixMilli()
	g.mu.Unlock()
	return g.persist()
}

func (g *groupTable) delete(name string) (bool, error) {
	g.mu.Lock()
	_, ok := g.groups[name]
	delete(g.groups, name)
	if ok {
		g.version.Counter++
		g.version.Timestamp = time.Now().UnixMilli()
	}
	g.mu.Unlock()
	if !ok {
		return false, nil
	}
	return true, g.persist()
}

// snapshot returns the data version and every group, sorted by name.
func (g *groupTable) snapshot() (body.TopicVersion, []body.SubscriptionGroupConfig) {
	g.mu.RLock()
	v := g.version
	list := make([]body.SubscriptionGroupConfig, 0, len(g.groups))
	for _, sg := range g.groups {
		list = append(list, sg)
	}
	g.mu.RUnlock()
	sort.Slice(list, func(i, j int) bool { return list[i].GroupName < list[j].GroupName })
	return v, list
}

func (g *groupTable) encode() []byte {
	v, list := g.snapshot()
	return body.AppendSubscriptionGroupFile(nil, v, list)
}

func (g *groupTable) persist() error {
	g.pmu.Lock()
	defer g.pmu.Unlock()
	return writeConfigFile(g.path, g.encode())
}

// names lists every group, sorted.
// count is the number of groups.
func (g *groupTable) count() int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return len(g.groups)
}

func (g *groupTable) names() []string {
	g.mu.RLock()
	out := make([]string, 0, len(g.groups))
	for name := range g.groups {
		out = append(out, name)
	}
	g.mu.RUnlock()
	sort.Strings(out)
	return out
}
