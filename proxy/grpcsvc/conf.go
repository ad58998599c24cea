package grpcsvc

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/broker/auth"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/transport/tlsconf"
	"github.com/rocketgo/rocketgo/compat/javaprops"

	"github.com/rocketgo/rocketgo/compat/fastjson"
)

// Broker config keys that turn the endpoint on inside mqbroker (Java's
// proxy keys, in broker.conf as with enableProxy-style local mode).
const (
	KeyEnableGrpcProxy = "enableGrpcProxy"
	KeyGrpcServerPort  = "grpcServerPort"
	// KeyMinInvisibleForRecv is Java's ProxyConfig minInvisibleTimeMillsForRecv
	// (10000): the shortest invisible duration a ReceiveMessage may ask.
	KeyMinInvisibleForRecv = "minInvisibleTimeMillsForRecv"
)

// IsBrokerKey reports a broker.conf key this package reads.
func IsBrokerKey(k string) bool {
	if _, ok := renewKeyNames[k]; ok {
		return true
	}
	return k == KeyEnableGrpcProxy || k == KeyGrpcServerPort || k == KeyMinInvisibleForRecv ||
		k == KeyTLSTestModeEnable || k == KeyTLSCertPath || k == KeyTLSKeyPath
}

// TuneFromBrokerConf applies the proxy keys of a broker.conf that tune the
// service (minInvisibleTimeMillsForRecv) to c; an empty path changes
// nothing.
func TuneFromBrokerConf(path string, c *Config) error {
	if path == "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("grpc proxy keys: %w", err)
	}
	props, err := javaprops.Parse(data)
	if err != nil {
		return fmt.Errorf("grpc proxy keys: %s: %w", path, err)
	}
	if v, ok := props.Get(KeyMinInvisibleForRecv); ok {
		ms, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || ms <= 0 {
			return fmt.Errorf("grpc proxy keys: %s=%q: want milliseconds > 0", KeyMinInvisibleForRecv, v)
		}
		c.MinInvisible = time.Duration(ms) * time.Millisecond
	}
	rk := RenewKeysOf(c.Renew)
	for _, e := range props {
		if err := rk.set(e.Key, strings.TrimSpace(e.Value)); err != nil {
			return fmt.Errorf("grpc proxy keys: %s: %w", path, err)
		}
	}
	c.Renew = rk.Config()
	return nil
}

// BrokerKeys reads enableGrpcProxy (default false) and grpcServerPort
// (default 8081) from a broker.conf; an empty path gives the defaults.
func BrokerKeys(path string) (enable bool, port int, err error) {
	port = 8081
	if path == "" {
		return false, port, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return false, 0, fmt.Errorf("grpc proxy keys: %w", err)
	}
	props, err := javaprops.Parse(data)
	if err != nil {
		return false, 0, fmt.Errorf("grpc proxy keys: %s: %w", path, err)
	}
	if v, ok := props.Get(KeyEnableGrpcProxy); ok {
		if enable, err = strconv.ParseBool(strings.TrimSpace(v)); err != nil {
			return false, 0, fmt.Errorf("grpc proxy keys: %s=%q: %w", KeyEnableGrpcProxy, v, err)
		}
	}
	if v, ok := props.Get(KeyGrpcServerPort); ok {
		if port, err = strconv.Atoi(strings.TrimSpace(v)); err != nil || port < 0 || port > 65535 {
			return false, 0, fmt.Errorf("grpc proxy keys: %s=%q: bad port", KeyGrpcServerPort, v)
		}
	}
	return enable, port, nil
}

// ProxyFile is Java's rmq-proxy.json (ProxyConfig), the keys mqproxy
// reads. Unknown keys are kept in Unknown.
type ProxyFile struct {
	GrpcServerPort      int    `json:"grpcServerPort"`
	RemotingListenPort  int    `json:"remotingListenPort"`
	NamesrvAddr         string `json:"namesrvAddr"`
	RocketMQClusterName string `json:"rocketMQClusterName"`
	ProxyMode           string `json:"proxyMode"`
	MaxMessageSize      int    `json:"maxMessageSize"`
	GrpcMaxInboundSize  int    `json:"grpcMaxInboundMessageSize"`
	GrpcClientIdleMs    int64  `json:"grpcClientIdleTimeMills"`
	MinInvisibleRecvMs  int64  `json:"minInvisibleTimeMillsForRecv"`
	RelayTimeoutS       int64  `json:"grpcProxyRelayRequestTimeoutInSeconds"`

	// Receipt-handle auto-renew (renew.go); Java's defaults.
	RenewKeys

	// TLS of the gRPC port (ProxyConfig); tlsTestModeEnable defaults to true.
	TLSTestModeEnable bool   `json:"tlsTestModeEnable"`
	TLSCertPath       string `json:"tlsCertPath"`
	TLSKeyPath        string `json:"tlsKeyPath"`

	// Auth: Java reads AuthConfig from the same file.
	AuthenticationEnabled                bool   `json:"authenticationEnabled"`
	AuthorizationEnabled                 bool   `json:"authorizationEnabled"`
	AuthenticationWhitelist              string `json:"authenticationWhitelist"`
	AuthorizationWhitelist               string `json:"authorizationWhitelist"`
	InnerClientAuthenticationCredentials string `json:"innerClientAuthenticationCredentials"`
	// EnableAclRpcHookForClusterMode signs every request to name servers
	// and brokers with InnerClientAuthenticationCredentials.
	EnableAclRpcHookForClusterMode bool `json:"enableAclRpcHookForClusterMode"`
	UserCacheExpiredSeconds        int  `json:"userCacheExpiredSeconds"`
	UserCacheRefreshSeconds        int  `json:"userCacheRefreshSeconds"`
	UserCacheMaxNum                int  `json:"userCacheMaxNum"`

	// TLSProps are the file's "tls.*" members (ours: Java takes these from
	// -D system properties), for tlsconf.Load.
	TLSProps map[string]string `json:"-"`

	Unknown []string `json:"-"`
}

// proxyFileKeys are the members LoadProxyFile reads, and the provider
// class names it accepts without reading (they name our only
// implementation: ProxyAuthenticationMetadataProvider's behaviour).
var proxyFileKeys = map[string]bool{"grpcServerPort": true, "remotingListenPort": true, "namesrvAddr": true, "rocketMQClusterName": true,
	"proxyMode": true, "maxMessageSize": true, "grpcMaxInboundMessageSize": true, "grpcClientIdleTimeMills": true, "minInvisibleTimeMillsForRecv": true, "grpcProxyRelayRequestTimeoutInSeconds": true,
	"tlsTestModeEnable": true, "tlsCertPath": true, "tlsKeyPath": true,
	"authenticationEnabled": true, "authorizationEnabled": true, "authenticationWhitelist": true, "authorizationWhitelist": true,
	"innerClientAuthenticationCredentials": true, "enableAclRpcHookForClusterMode": true,
	"userCacheExpiredSeconds": true, "userCacheRefreshSeconds": true, "userCacheMaxNum": true,
	"enableProxyAutoRenew": true, "defaultInvisibleTimeMills": true, "renewAheadTimeMillis": true, "renewMaxTimeMillis": true,
	"renewSchedulePeriodMillis": true, "maxRenewRetryTimes": true, "renewThreadPoolNums": true, "renewMaxThreadPoolNums": true,
	"renewThreadPoolQueueCapacity": true, "invisibleTimeMillisWhenClear": true,
	"authenticationProvider": true, "authenticationMetadataProvider": true, "authorizationProvider": true, "authorizationMetadataProvider": true,
}

// DefaultProxyFile is ProxyConfig's defaults.
func DefaultProxyFile() ProxyFile {
	return ProxyFile{GrpcServerPort: 8081, RemotingListenPort: 8080, RocketMQClusterName: "DefaultCluster", ProxyMode: "cluster",
		MaxMessageSize: 4 << 20, GrpcMaxInboundSize: 130 << 20, GrpcClientIdleMs: 120000, MinInvisibleRecvMs: 10000, RelayTimeoutS: 5,
		RenewKeys: DefaultRenewKeys(), TLSTestModeEnable: true, UserCacheExpiredSeconds: 300, UserCacheRefreshSeconds: 20, UserCacheMaxNum: 20000}
}

// LoadProxyFile reads an rmq-proxy.json over the defaults.
func LoadProxyFile(path string) (ProxyFile, error) {
	pf := DefaultProxyFile()
	data, err := os.ReadFile(path)
	if err != nil {
		return pf, fmt.Errorf("proxy config: %w", err)
	}
	if err := fastjson.Unmarshal(data, &pf); err != nil {
		return pf, fmt.Errorf("proxy config %s: %w", path, err)
	}
	var all map[string]json.RawMessage
	if fastjson.Unmarshal(data, &all) == nil {
		for k, raw := range all {
			if strings.HasPrefix(k, "tls.") {
				if pf.TLSProps == nil {
					pf.TLSProps = map[string]string{}
				}
				var str string
				if fastjson.Unmarshal(raw, &str) != nil {
					str = strings.TrimSpace(string(raw)) // true, false, numbers
				}
				pf.TLSProps[k] = str
				continue
			}
			if !proxyFileKeys[k] {
				pf.Unknown = append(pf.Unknown, k)
			}
		}
	}
	return pf, nil
}

// GRPCTLS is the gRPC port's TLS of the file with mode (tls.server.mode).
func (pf ProxyFile) GRPCTLS(mode tlsconf.Mode) TLSConfig {
	c := DefaultTLS(mode)
	c.TestMode = pf.TLSTestModeEnable
	if pf.TLSCertPath != "" {
		c.CertPath = pf.TLSCertPath
	}
	if pf.TLSKeyPath != "" {
		c.KeyPath = pf.TLSKeyPath
	}
	return c
}

// Auth is the file's AuthConfig and, with enableAclRpcHookForClusterMode,
// the signer of every request to name servers and brokers (Java's
// AclClientRPCHook with innerClientAuthenticationCredentials).
func (pf ProxyFile) Auth() (AuthConfig, func(*codec.Frame), error) {
	cfg := AuthConfig{AuthenticationEnabled: pf.AuthenticationEnabled, AuthorizationEnabled: pf.AuthorizationEnabled,
		AuthenticationWhitelist: pf.AuthenticationWhitelist, AuthorizationWhitelist: pf.AuthorizationWhitelist}
	if !pf.EnableAclRpcHookForClusterMode {
		return cfg, nil, nil
	}
	creds, ok, err := auth.ParseCredentials(pf.InnerClientAuthenticationCredentials)
	if err != nil || !ok || creds.SecretKey == "" {
		// compat: Java falls back to $ROCKETMQ_HOME/conf/tools.yml; we
		// want the credentials in the file.
		return cfg, nil, fmt.Errorf("proxy config: enableAclRpcHookForClusterMode needs innerClientAuthenticationCredentials with accessKey and secretKey (%v)", err)
	}
	return cfg, creds.Signer(), nil
}

// AuthorityConfig is the file's cache settings for the cluster's users
// and ACLs.
func (pf ProxyFile) AuthorityConfig() ClusterAuthorityConfig {
	return ClusterAuthorityConfig{Cluster: pf.RocketMQClusterName, Refresh: time.Duration(pf.UserCacheRefreshSeconds) * time.Second,
		Expire: time.Duration(pf.UserCacheExpiredSeconds) * time.Second, MaxNum: pf.UserCacheMaxNum}
}

// RenewKeys are ProxyConfig's auto-renew keys, as rmq-proxy.json and
// broker.conf (local mode) spell them.
type RenewKeys struct {
	EnableProxyAutoRenew         bool  `json:"enableProxyAutoRenew"`
	DefaultInvisibleTimeMills    int64 `json:"defaultInvisibleTimeMills"`
	RenewAheadTimeMillis         int64 `json:"renewAheadTimeMillis"`
	RenewMaxTimeMillis           int64 `json:"renewMaxTimeMillis"`
	RenewSchedulePeriodMillis    int64 `json:"renewSchedulePeriodMillis"`
	MaxRenewRetryTimes           int64 `json:"maxRenewRetryTimes"`
	RenewThreadPoolNums          int64 `json:"renewThreadPoolNums"`
	RenewMaxThreadPoolNums       int64 `json:"renewMaxThreadPoolNums"` // read; our workers do not grow
	RenewThreadPoolQueueCapacity int64 `json:"renewThreadPoolQueueCapacity"`
	InvisibleTimeMillisWhenClear int64 `json:"invisibleTimeMillisWhenClear"`
}

// renewKeyNames are RenewKeys' keys (IsBrokerKey, set).
var renewKeyNames = map[string]bool{"enableProxyAutoRenew": true, "defaultInvisibleTimeMills": true, "renewAheadTimeMillis": true,
	"renewMaxTimeMillis": true, "renewSchedulePeriodMillis": true, "maxRenewRetryTimes": true, "renewThreadPoolNums": true,
	"renewMaxThreadPoolNums": true, "renewThreadPoolQueueCapacity": true, "invisibleTimeMillisWhenClear": true}

// DefaultRenewKeys is ProxyConfig's defaults.
func DefaultRenewKeys() RenewKeys { return RenewKeysOf(DefaultRenew()) }

// RenewKeysOf is c as keys.
func RenewKeysOf(c RenewConfig) RenewKeys {
	c = c.withDefaults()
	return RenewKeys{EnableProxyAutoRenew: !c.Disabled, DefaultInvisibleTimeMills: c.DefaultInvisible.Milliseconds(),
		RenewAheadTimeMillis: c.Ahead.Milliseconds(), RenewMaxTimeMillis: c.MaxTime.Milliseconds(),
		RenewSchedulePeriodMillis: c.Period.Milliseconds(), MaxRenewRetryTimes: int64(c.MaxRetries),
		RenewThreadPoolNums: int64(c.Workers), RenewMaxThreadPoolNums: 4, RenewThreadPoolQueueCapacity: int64(c.Queue),
		InvisibleTimeMillisWhenClear: c.ClearInvisible.Milliseconds()}
}

// Config is the keys as a RenewConfig (values <= 0 take the defaults).
func (k RenewKeys) Config() RenewConfig {
	ms := func(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
	return RenewConfig{Disabled: !k.EnableProxyAutoRenew, DefaultInvisible: ms(k.DefaultInvisibleTimeMills), Ahead: ms(k.RenewAheadTimeMillis),
		MaxTime: ms(k.RenewMaxTimeMillis), Period: ms(k.RenewSchedulePeriodMillis), MaxRetries: int(k.MaxRenewRetryTimes),
		Workers: int(k.RenewThreadPoolNums), Queue: int(k.RenewThreadPoolQueueCapacity), ClearInvisible: ms(k.InvisibleTimeMillisWhenClear)}.withDefaults()
}

// set applies one broker.conf key; other keys are ignored.
func (k *RenewKeys) set(key, v string) error {
	if !renewKeyNames[key] {
		return nil
	}
	if key == "enableProxyAutoRenew" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%s=%q: %w", key, v, err)
		}
		k.EnableProxyAutoRenew = b
		return nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return fmt.Errorf("%s=%q: want a number > 0", key, v)
	}
	switch key {
	case "defaultInvisibleTimeMills":
		k.DefaultInvisibleTimeMills = n
	case "renewAheadTimeMillis":
		k.RenewAheadTimeMillis = n
	case "renewMaxTimeMillis":
		k.RenewMaxTimeMillis = n
	case "renewSchedulePeriodMillis":
		k.RenewSchedulePeriodMillis = n
	case "maxRenewRetryTimes":
		k.MaxRenewRetryTimes = n
	case "renewThreadPoolNums":
		k.RenewThreadPoolNums = n
	case "renewMaxThreadPoolNums":
		k.RenewMaxThreadPoolNums = n
	case "renewThreadPoolQueueCapacity":
		k.RenewThreadPoolQueueCapacity = n
	case "invisibleTimeMillisWhenClear":
		k.InvisibleTimeMillisWhenClear = n
	}
	return nil
}
