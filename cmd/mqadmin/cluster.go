package main

import (
	"flag"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
)

// runtimeInfo fetches GET_BROKER_RUNTIME_INFO as a map.
func (a *admin) runtimeInfo(addr string) (map[string]string, error) {
	resp, err := a.call(addr, request(codec.ReqGetBrokerRuntimeInfo))
	if err != nil {
		return nil, err
	}
	kvs, err := body.DecodeKVTable(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("runtime info of %s: %w", addr, err)
	}
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		m[kv.Key] = kv.Value
	}
	return m, nil
}

// firstFloat parses the first space-separated number of v ("putTps" is
// "10s 1m 10m" rates); missing or bad values read 0.
func firstFloat(v string) float64 {
	f, _ := strconv.ParseFloat(strings.Fields(v + " 0")[0], 64)
	return f
}

func setupClusterList(fs *flag.FlagSet) func(*admin) error {
	only := fs.String("c", "", "which cluster")
	return func(a *admin) error {
		ci, err := a.clusterInfo()
		if err != nil {
			return err
		}
		a.printf("%-22s  %-22s  %-4s  %-22s %-16s  %16s  %30s  %-22s  %-11s  %-12s  %-8s  %-10s\n",
			"#Cluster Name", "#Broker Name", "#BID", "#Addr", "#Version", "#InTPS(LOAD)", "#OutTPS(LOAD)",
			"#Timer(Progress)", "#PCWait(ms)", "#Hour", "#SPACE", "#ACTIVATED")
		clusters := ci.ClusterAddrTable
		sort.Slice(clusters, func(i, j int) bool { return clusters[i].Cluster < clusters[j].Cluster })
		for _, c := range clusters {
			if *only != "" && c.Cluster != *only {
				continue
			}
			names := append([]string(nil), c.BrokerNames...)
			sort.Strings(names)
			for _, name := range names {
				for _, bd := range ci.BrokerAddrTable {
					if bd.BrokerName != name {
						continue
					}
					for _, ba := range bd.BrokerAddrs {
						kv, err := a.runtimeInfo(ba.Addr)
						if err != nil {
							kv = map[string]string{}
						}
						hour := 0.0
						if e, err := strconv.ParseInt(kv["earliestMessageTimeStamp"], 10, 64); err == nil && e > 0 {
							hour = float64(time.Now().UnixMilli()-e) / 3600000
						}
						out := kv["getTransferredTps"]
						if out == "" {
							out = kv["getTotalTps"]
						}
						a.printf("%-22s  %-22s  %-4d  %-22s %-16s  %16s  %30s  %-22s  %-11s  %-12s  %-8s  %-10s\n",
							c.Cluster, name, ba.ID, ba.Addr, kv["brokerVersionDesc"],
							fmt.Sprintf("%9.2f(%s,%sms)", firstFloat(kv["putTps"]), orZero(kv["sendThreadPoolQueueSize"]), orZero(kv["sendThreadPoolQueueHeadWaitTimeMills"])),
							fmt.Sprintf("%9.2f(%s,%sms)", firstFloat(out), orZero(kv["pullThreadPoolQueueSize"]), orZero(kv["pullThreadPoolQueueHeadWaitTimeMills"])),
							fmt.Sprintf("%s-%s", orZero(kv["timerReadBehind"]), orZero(kv["timerOffsetBehind"])),
							orZero(kv["pageCacheLockTimeMills"]), fmt.Sprintf("%2.2f", hour),
							fmt.Sprintf("%.4f", firstFloat(kv["commitLogDiskRatio"])), orFalse(kv["brokerActive"]))
					}
				}
			}
		}
		return nil
	}
}

func orZero(v string) string {
	if v == "" {
		return "0"
	}
	return v
}

func orFalse(v string) string {
	if v == "" {
		return "false"
	}
	return v
}

func setupBrokerStatus(fs *flag.FlagSet) func(*admin) error {
	broker := fs.String("b", "", "Broker address")
	cluster := fs.String("c", "", "which cluster")
	return func(a *admin) error {
		addrs, err := a.targets(*broker, *cluster)
		if err != nil {
			return err
		}
		for _, addr := range addrs {
			kv, err := a.runtimeInfo(addr)
			if err != nil {
				return err
			}
			keys := make([]string, 0, len(kv))
			for k := range kv {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if len(addrs) > 1 {
					a.printf("%-24s %-32s: %s\n", addr, k, kv[k])
				} else {
					a.printf("%-32s: %s\n", k, kv[k])
				}
			}
		}
		return nil
	}
}

func setupGetBrokerConfig(fs *flag.FlagSet) func(*admin) error {
	broker := fs.String("b", "", "get which broker")
	cluster := fs.String("c", "", "get which cluster")
	return func(a *admin) error {
		addrs, err := a.targets(*broker, *cluster)
		if err != nil {
			return err
		}
		for _, addr := range addrs {
			resp, err := a.call(addr, request(codec.ReqGetBrokerConfig))
			if err != nil {
				return err
			}
			a.printf("============%s============\n", addr)
			// The body is java.util.Properties text: key=value lines.
			var lines []string
			for _, l := range strings.Split(string(resp.Body), "\n") {
				if l = strings.TrimRight(l, "\r"); l != "" && !strings.HasPrefix(l, "#") {
					lines = append(lines, l)
				}
			}
			sort.Strings(lines)
			for _, l := range lines {
				k, v, _ := strings.Cut(l, "=")
				a.printf("%-50s=  %s\n", k, v)
			}
		}
		return nil
	}
}
