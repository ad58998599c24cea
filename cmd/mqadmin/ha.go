package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
)

// setupHAStatus is Java's haStatus: GET_BROKER_HA_STATUS of one broker or
// of every master of a cluster, optionally repeated every -i seconds.
func setupHAStatus(fs *flag.FlagSet) func(*admin) error {
	broker := fs.String("b", "", "which broker to fetch")
	cluster := fs.String("c", "", "which cluster")
	interval := fs.String("i", "", "the interval(second) of get info")
	return func(a *admin) error {
		if *interval == "" {
			return haStatusOnce(a, *broker, *cluster)
		}
		every := 3 // Java's default when -i has no number
		if s := strings.TrimSpace(*interval); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil {
				return fmt.Errorf("haStatus: -i %q: %w", s, err)
			}
			every = n
		}
		for {
			if err := haStatusOnce(a, *broker, *cluster); err != nil {
				return err
			}
			time.Sleep(time.Duration(every) * time.Second)
		}
	}
}

func haStatusOnce(a *admin, broker, cluster string) error {
	addrs, err := a.targets(strings.TrimSpace(broker), strings.TrimSpace(cluster))
	if err != nil {
		return err
	}
	for _, addr := range addrs {
		resp, err := a.call(addr, request(codec.ReqGetBrokerHaStatus))
		if err != nil {
			return err
		}
		info, err := body.DecodeHARuntimeInfo(resp.Body)
		if err != nil {
			return err
		}
		printHAStatus(a, addr, &info)
	}
	return nil
}

// printHAStatus prints what Java's HAStatusSubCommand.printStatus prints.
func printHAStatus(a *admin, addr string, h *body.HARuntimeInfo) {
	if h.Master {
		a.printf("\n#MasterAddr\t%s\n#MasterCommitLogMaxOffset\t%d\n#SlaveNum\t%d\n#InSyncSlaveNum\t%d\n",
			addr, h.MasterCommitLogMaxOffset, len(h.HAConnectionInfo), h.InSyncSlaveNums)
		a.printf("%-32s  %-16s %16s %16s %16s %16s\n",
			"#SlaveAddr", "#SlaveAckOffset", "#Diff", "#TransferSpeed(KB/s)", "#Status", "#TransferFromWhere")
		for _, c := range h.HAConnectionInfo {
			status := "Fall Behind"
			if c.InSync {
				status = "OK"
			}
			a.printf("%-32s  %-16d %16d %16.2f %16s %16d\n",
				c.Addr, c.SlaveAckOffset, c.Diff, float64(c.TransferredByteInSecond)/1024.0, status, c.TransferFromWhere)
		}
		return
	}
	c := &h.HAClientRuntimeInfo
	master := c.MasterAddr
	if master == "" {
		master = "null" // compat: Java prints a null String as "null"
	}
	a.printf("\n#MasterAddr\t%s\n", master)
	a.printf("#CommitLogMaxOffset\t%d\n", c.MaxOffset)
	a.printf("#TransferSpeed(KB/s)\t%.2f\n", float64(c.TransferredByteInSecond)/1024.0)
	a.printf("#LastReadTime\t%s\n", humanMillis(c.LastReadTimestamp))
	a.printf("#LastWriteTime\t%s\n", humanMillis(c.LastWriteTimestamp))
	a.printf("#MasterFlushOffset\t%d\n", c.MasterFlushOffset)
}

// humanMillis is Java's UtilAll.timeMillisToHumanString2 (local time).
func humanMillis(ms int64) string {
	return time.UnixMilli(ms).Format("2006-01-02 15:04:05,000")
}
