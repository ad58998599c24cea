package grpcsvc

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/compat/javaprops"
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
	return k == KeyEnableGrpcProxy || k == KeyGrpcServerPort || k == KeyMinInvisibleForRecv
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

	Unknown []string `json:"-"`
}

// DefaultProxyFile is ProxyConfig's defaults.
func DefaultProxyFile() ProxyFile {
	return ProxyFile{GrpcServerPort: 8081, RemotingListenPort: 8080, RocketMQClusterName: "DefaultCluster", ProxyMode: "cluster",
		MaxMessageSize: 4 << 20, GrpcMaxInboundSize: 130 << 20, GrpcClientIdleMs: 120000, MinInvisibleRecvMs: 10000}
}

// LoadProxyFile reads an rmq-proxy.json over the defaults.
func LoadProxyFile(path string) (ProxyFile, error) {
	pf := DefaultProxyFile()
	data, err := os.ReadFile(path)
	if err != nil {
		return pf, fmt.Errorf("proxy config: %w", err)
	}
	if err := json.Unmarshal(data, &pf); err != nil {
		return pf, fmt.Errorf("proxy config %s: %w", path, err)
	}
	var all map[string]json.RawMessage
	if json.Unmarshal(data, &all) == nil {
		known := map[string]bool{"grpcServerPort": true, "remotingListenPort": true, "namesrvAddr": true, "rocketMQClusterName": true,
			"proxyMode": true, "maxMessageSize": true, "grpcMaxInboundMessageSize": true, "grpcClientIdleTimeMills": true, "minInvisibleTimeMillsForRecv": true}
		for k := range all {
			if !known[k] {
				pf.Unknown = append(pf.Unknown, k)
			}
		}
	}
	return pf, nil
}
