package broker

import (
	"errors"
	"fmt"
	"github.com/rocketgo/rocketgo/broker/auth"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/compat/blacklist"
	"github.com/rocketgo/rocketgo/compat/javaprops"
	"github.com/rocketgo/rocketgo/compat/remarks"
)

// ErrConfigBlackList is UpdateConfig's refusal of a key on the black list.
var ErrConfigBlackList = errors.New("broker: config key on the black list")

// configView is the broker configuration UPDATE_BROKER_CONFIG and
// GET_BROKER_CONFIG work on (*Broker: UpdateConfig, appendProperties).
type configView interface {
	updateConfig(props javaprops.Props, superUser bool) error
	appendProperties(dst []byte) []byte
}

// configAdmin serves UPDATE_BROKER_CONFIG and GET_BROKER_CONFIG.
type configAdmin struct {
	cfg    configView
	topics *topicTable // GET_BROKER_CONFIG's version is the topic data version
	auth   *authCheck  // with authentication on, updates need a super user
	log    *slog.Logger
}

func (a *configAdmin) register(r *transport.Router, pool *transport.Pool) {
	r.Handle(codec.ReqUpdateBrokerConfig, pool, a.updateBrokerConfig)
	r.Handle(codec.ReqGetBrokerConfig, pool, a.brokerConfig)
}

// updateBrokerConfig answers UPDATE_BROKER_CONFIG: the body is a Java
// properties text (AdminBrokerProcessor.updateBrokerConfig).
func (a *configAdmin) updateBrokerConfig(c *transport.Conn, req *codec.Frame) *codec.Frame {
	superUser := false
	if a.auth.enabled() && a.auth.authn {
		if r := a.auth.superOnly(req); r != nil {
			a.log.Warn("update broker config refused: not a super user", "remote", c.RemoteAddr(), "user", auth.RequestUser(req))
			return r
		}
		superUser = true
	}
	if len(req.Body) == 0 {
		return codec.NewResponse(req, int32(codec.RespSuccess), "")
	}
	props, err := javaprops.Parse(req.Body)
	if err != nil {
		a.log.Warn("update broker config: bad body", "remote", c.RemoteAddr(), "err", err)
		// compat: Java's remark when the body is not a properties text.
		return codec.NewResponse(req, int32(codec.RespSystemError), remarks.String2PropertiesFail)
	}
	a.log.Info("update broker config", "remote", c.RemoteAddr(), "props", props)
	switch err := a.cfg.updateConfig(props, superUser); {
	case errors.Is(err, ErrConfigBlackList):
		a.log.Warn("update broker config refused", "remote", c.RemoteAddr(), "err", err)
		return codec.NewResponse(req, int32(codec.RespNoPermission), remarks.ConfigInBlackList)
	case err != nil:
		return codec.NewResponse(req, int32(codec.RespSystemError), err.Error())
	}
	return codec.NewResponse(req, int32(codec.RespSuccess), "")
}

// brokerConfig answers GET_BROKER_CONFIG: body = "key=value" lines,
// header version = the topic data version JSON.
func (a *configAdmin) brokerConfig(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Body = a.cfg.appendProperties(nil)
	v, _ := a.topics.snapshot()
	resp.Set("version", string(body.AppendTopicVersion(nil, v)))
	return resp
}

// appendProperties writes every setting as key=value lines, sorted by key,
// with the values updates have set (restart-only ones included, as the
// Java broker reports them).
func (b *Broker) appendProperties(dst []byte) []byte {
	b.cfgMu.Lock()
	defer b.cfgMu.Unlock()
	for _, kv := range b.cfg.Properties() {
		if authKeys[kv[0]] {
			continue // not in Java's answer; two of them hold secrets
		}
		v := kv[1]
		if p, ok := b.pending[kv[0]]; ok {
			v = p
		}
		dst = append(dst, kv[0]...)
		dst = append(dst, '=')
		dst = append(dst, v...)
		dst = append(dst, '\n')
	}
	return dst
}

// UpdateConfig applies broker.conf settings at run time, as
// UPDATE_BROKER_CONFIG does. Keys on the black list (configBlackList plus
// compat/blacklist's fixed rules), keys read only at start-up
// (startupKeys) and, while refuseSensitiveRemoteConfig is on, the
// sensitive ones (sensitiveKeys plus sensitiveRemoteConfigKeys) fail the
// whole update with ErrConfigBlackList, nothing changed; unknown keys are ignored (as Java ignores them). A bad value,
// or a result that would not validate, fails it with nothing applied or
// persisted: the running configuration with the update and the restart-only
// values updated before it, and the config file as the next start would
// read it, must both pass Config.Validate. Runtime keys (runtimeKeys) take
// effect at once; the other known keys at the next start. When the broker
// was started from a file (brokerConfigPath) the values are written back
// to it.
func (b *Broker) UpdateConfig(props javaprops.Props) error { return b.updateConfig(props, false) }

// updateConfig is UpdateConfig; superUser (a signed super user, with
// authentication on) may change the sensitive keys whatever
// refuseSensitiveRemoteConfig says.
func (b *Broker) updateConfig(props javaprops.Props, superUser bool) error {
	b.cfgMu.Lock()
	defer b.cfgMu.Unlock()
	// Like Java: one refused key refuses the whole update, before anything
	// is applied or persisted. Our fixed rules (compat/blacklist) refuse
	// more than Java's list: every path, code, protection, retention and
	// store-layout key; startupKeys more again.
	if key, why, refused := blacklist.Check(props, b.cfg.ConfigBlackList); refused {
		return fmt.Errorf("%w: %s (%s)", ErrConfigBlackList, key, why)
	}
	for _, e := range props {
		if startupKeys[e.Key] {
			return fmt.Errorf("%w: %s (read only at start-up)", ErrConfigBlackList, e.Key)
		}
	}
	// Stricter than Java: keys that re-home the broker, and the operator's
	// additions, unless refuseSensitiveRemoteConfig is off.
	if key, refused := b.cfg.remotePolicy().Check(props, sensitiveKeys); refused && !superUser {
		return fmt.Errorf("%w: %s (%s)", ErrConfigBlackList, key, blacklist.ReasonSensitive)
	}

	// Check the whole result on a copy first: all or nothing.
	next := b.cfg
	for k, v := range b.pending {
		if _, err := next.Set(k, v); err != nil {
			panic(fmt.Sprintf("broker: pending config %s=%q no longer parses: %v", k, v, err))
		}
	}
	var applied javaprops.Props
	for _, e := range props {
		known, err := next.Set(e.Key, e.Value)
		if err != nil {
			return fmt.Errorf("update broker config: %w", err)
		}
		if !known {
			b.log.Warn("update broker config: unknown key ignored", "key", e.Key)
			continue
		}
		applied.Set(e.Key, strings.TrimSpace(e.Value))
	}
	if len(applied) == 0 {
		return nil
	}
	if err := next.Validate(); err != nil {
		return fmt.Errorf("update broker config: %w", err)
	}
	var file javaprops.Props
	path := b.cfg.BrokerConfigPath
	if path != "" {
		var err error
		if file, err = mergedConfigFile(path, applied); err != nil {
			// The update is checked on the running config; writing the
			// file fails below the same way and only logs, as in Java.
			b.log.Error("update broker config: read config file", "path", path, "err", err)
			path = ""
		} else if err := validateConfigFile(file); err != nil {
			return fmt.Errorf("update broker config: %s would not start: %w", path, err)
		}
	}

	turnedOnAutoCreate := false
	for _, e := range applied {
		if !runtimeKeys[e.Key] {
			if b.pending == nil {
				b.pending = make(map[string]string)
			}
			b.pending[e.Key] = e.Value
			b.log.Info("broker config updated; takes effect after restart", "key", e.Key, "value", e.Value)
			continue
		}
		if e.Key == "autoCreateTopicEnable" && next.AutoCreateTopicEnable && !b.cfg.AutoCreateTopicEnable {
			turnedOnAutoCreate = true
		}
		if e.Key == "inSyncReplicas" {
			b.setInSyncReplicas(e.Value)
		} else if e.Key == "slaveTimeout" {
			b.setSlaveTimeout(e.Value)
		} else if e.Key == "minInSyncReplicas" {
			b.setMinInSyncReplicas(e.Value)
		} else if _, err := b.cfg.Set(e.Key, e.Value); err != nil {
			panic(fmt.Sprintf("broker: config value validated on a copy fails: %v", err))
		}
		b.log.Info("broker config updated", "key", e.Key, "value", e.Value)
	}
	b.live.load(&b.cfg)
	if b.sendPool != nil {
		b.sendPool.SetMaxQueueWait(b.live.waitInQueue())
	}

	if turnedOnAutoCreate {
		// Java creates TBW102 only at start; we add it now so the switch
		// works without a restart.
		b.topics.createIfAbsent(TopicAutoCreate, b.cfg.DefaultTopicQueueNums, body.PermInherit|body.PermRead|body.PermWrite, 0)
	}
	if _, ok := applied.Get("namesrvAddr"); ok {
		b.reg.changed()
	}
	if _, ok := applied.Get("brokerPermission"); ok {
		// Like Java: a new data version and a registration now, so routes
		// carry the masked permissions at once.
		b.topics.bump()
		b.reg.changed()
	}
	if path != "" {
		if err := writeConfigFile(path, javaprops.Append(nil, file)); err != nil {
			// Like Java: the update stands; only the file is stale.
			b.log.Error("persist broker config", "path", path, "err", err)
		}
	}
	return nil
}

// setInSyncReplicas applies a validated inSyncReplicas at once, as Java
// reads it on every put: the store's SYNC_MASTER policy and the HA
// server's quorum change together (puts already waiting keep their
// wait). cfgMu held; roleMu orders it with a role change, which builds the
// HA server from cfg.
func (b *Broker) setInSyncReplicas(value string) {
	b.roleMu.Lock()
	defer b.roleMu.Unlock()
	if _, err := b.cfg.Set("inSyncReplicas", value); err != nil {
		panic(fmt.Sprintf("broker: config value validated on a copy fails: %v", err))
	}
	n := max(b.cfg.InSyncReplicas, 1)
	if rs, ok := b.store.(replStore); ok {
		rs.SetInSyncReplicas(n)
	}
	b.setReplInSyncReplicasLocked(n) // either protocol's server (AutoSwitch: without allAckInSyncStateSet)
}

// setMinInSyncReplicas applies a validated minInSyncReplicas at once (Java
// reads it on every put): the controller-mode send gate compares the
// SyncStateSet with it from the next send. cfgMu held.
func (b *Broker) setMinInSyncReplicas(value string) {
	if _, err := b.cfg.Set("minInSyncReplicas", value); err != nil {
		panic(fmt.Sprintf("broker: config value validated on a copy fails: %v", err))
	}
	if b.rm != nil {
		b.rm.minInSync.Store(int32(b.cfg.MinInSyncReplicas))
	}
}

// setSlaveTimeout applies a validated slaveTimeout (ms) at once: puts
// waiting for their replicas are measured against it from the next
// watchdog round. cfgMu held.
func (b *Broker) setSlaveTimeout(value string) {
	if _, err := b.cfg.Set("slaveTimeout", value); err != nil {
		panic(fmt.Sprintf("broker: config value validated on a copy fails: %v", err))
	}
	if rs, ok := b.store.(replStore); ok {
		rs.SetSlaveTimeout(time.Duration(b.cfg.SlaveTimeout) * time.Millisecond)
	}
}

// mergedConfigFile is the broker.conf at path with the updated keys set,
// its other keys kept in order. (Java rewrites the file with every
// setting; both lose comments, and both reload to the same values.)
func mergedConfigFile(path string, updated javaprops.Props) (javaprops.Props, error) {
	var props javaprops.Props
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		if props, err = javaprops.Parse(data); err != nil {
			return nil, fmt.Errorf("broker config %s: %w", path, err)
		}
	case !os.IsNotExist(err):
		return nil, fmt.Errorf("broker config %s: %w", path, err)
	}
	for _, e := range updated {
		props.Set(e.Key, e.Value)
	}
	return props, nil
}

// validateConfigFile checks that a broker started from a file with props
// (mqbroker -c: the defaults, then the file) gets a valid configuration.
func validateConfigFile(props javaprops.Props) error {
	c := DefaultConfig()
	for _, e := range props {
		if _, err := c.Set(e.Key, e.Value); err != nil {
			return err
		}
	}
	return c.Validate()
}
