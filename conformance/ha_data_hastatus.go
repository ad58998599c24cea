package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/conformance/harness"
)

// codeGetBrokerHAStatus is GET_BROKER_HA_STATUS (Java RequestCode 907).
const codeGetBrokerHAStatus = 907

// haStatusBody is the part of Java's HARuntimeInfo the scenario reads.
type haStatusBody struct {
	Master                   bool  `json:"master"`
	MasterCommitLogMaxOffset int64 `json:"masterCommitLogMaxOffset"`
	HAConnectionInfo         []struct {
		Addr           string `json:"addr"`
		SlaveAckOffset int64  `json:"slaveAckOffset"`
		Diff           int64  `json:"diff"`
		InSync         bool   `json:"inSync"`
	} `json:"haConnectionInfo"`
}

func haStatusRaw(ctx context.Context, addr string) (haStatusBody, error) {
	var st haStatusBody
	f, err := harness.Call(ctx, addr, codeGetBrokerHAStatus, nil, nil)
	if err != nil {
		return st, err
	}
	if f.Code != 0 {
		return st, fmt.Errorf("GET_BROKER_HA_STATUS of %s: code %d %q", addr, f.Code, f.Remark)
	}
	if err := json.Unmarshal(f.Body, &st); err != nil {
		return st, fmt.Errorf("GET_BROKER_HA_STATUS body %.300q: %w", f.Body, err)
	}
	return st, nil
}

// haStatusOut is what an mqadmin haStatus printout says (Java's
// HAStatusSubCommand format, which bin/mqadmin keeps).
type haStatusOut struct {
	fields map[string]string // "#MasterAddr" → value, …
	slaves []haSlaveRow
}

type haSlaveRow struct {
	addr      string
	ack, diff int64
	status    string
	from      int64
}

func parseHAStatus(out string) (haStatusOut, error) {
	res := haStatusOut{fields: map[string]string{}}
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#SlaveAddr"):
		case strings.HasPrefix(line, "#"):
			k, v, _ := strings.Cut(line, "\t")
			res.fields[strings.TrimSpace(k)] = strings.TrimSpace(v)
		default:
			f := strings.Fields(line)
			if len(f) < 6 {
				continue // log noise
			}
			ack, err1 := strconv.ParseInt(f[1], 10, 64)
			diff, err2 := strconv.ParseInt(f[2], 10, 64)
			from, err3 := strconv.ParseInt(f[len(f)-1], 10, 64)
			if err1 != nil || err2 != nil || err3 != nil {
				continue
			}
			res.slaves = append(res.slaves, haSlaveRow{addr: f[0], ack: ack, diff: diff, status: strings.Join(f[4:len(f)-1], " "), from: from})
		}
	}
	if len(res.fields) == 0 {
		return res, fmt.Errorf("no haStatus fields in %q", out)
	}
	return res, nil
}

// checkMasterStatus checks a master's haStatus printout after catch-up:
// its max offset, one slave from 127.0.0.1 acknowledged at that offset, in
// sync, nothing behind.
func checkMasterStatus(who, out string, maxOff int64) error {
	st, err := parseHAStatus(out)
	if err != nil {
		return fmt.Errorf("%s: %w", who, err)
	}
	if got := st.fields["#MasterCommitLogMaxOffset"]; got != strconv.FormatInt(maxOff, 10) {
		return fmt.Errorf("%s: #MasterCommitLogMaxOffset %q, want %d:\n%s", who, got, maxOff, out)
	}
	if st.fields["#SlaveNum"] != "1" || st.fields["#InSyncSlaveNum"] != "1" || len(st.slaves) != 1 {
		return fmt.Errorf("%s: want one in-sync slave:\n%s", who, out)
	}
	s := st.slaves[0]
	if !strings.Contains(s.addr, "127.0.0.1") || s.ack != maxOff || s.diff != 0 || s.status != "OK" {
		return fmt.Errorf("%s: slave row %+v, want 127.0.0.1 acknowledged at %d, diff 0, OK:\n%s", who, s, maxOff, out)
	}
	return nil
}

// checkSlaveStatus checks a slave's haStatus printout: its master's HA
// address and its max offset.
func checkSlaveStatus(who, out, masterHA string, maxOff int64) error {
	st, err := parseHAStatus(out)
	if err != nil {
		return fmt.Errorf("%s: %w", who, err)
	}
	if got := strings.TrimPrefix(st.fields["#MasterAddr"], "/"); got != masterHA {
		return fmt.Errorf("%s: #MasterAddr %q, want the master's HA address %s:\n%s", who, got, masterHA, out)
	}
	if got := st.fields["#CommitLogMaxOffset"]; got != strconv.FormatInt(maxOff, 10) {
		return fmt.Errorf("%s: #CommitLogMaxOffset %q, want %d:\n%s", who, got, maxOff, out)
	}
	return nil
}

// javaAdmin runs Java 5.3.3's mqadmin (tools MQAdminStartup from the
// reference server's jars) and returns its output.
func javaAdmin(ctx context.Context, h *HARun, args ...string) (string, error) {
	lib := filepath.Join(h.Runner.Env.Root, "conformance", ".cache", "java-server", "lib")
	home := filepath.Join(h.Dir, "mqadmin-home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return "", err
	}
	argv := append([]string{"-Xms64m", "-Xmx256m", "-XX:TieredStopAtLevel=1", "-Duser.home=" + home,
		"-cp", filepath.Join(lib, "*"), "org.apache.rocketmq.tools.command.MQAdminStartup"}, args...)
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "java", argv...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("java mqadmin %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// ourAdmin runs bin/mqadmin.
func ourAdmin(ctx context.Context, h *HARun, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, h.Runner.Env.Bin("mqadmin"), args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("bin/mqadmin %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// slaveRuntimeKeys are GET_BROKER_RUNTIME_INFO keys a Java 5.3.3 slave
// reports that carry its replication state.
var slaveRuntimeKeys = []string{"commitLogMaxOffset", "commitLogMinOffset", "dispatchBehindBytes", "brokerActive",
	"msgPutTotalTodayNow", "msgGetTotalTodayNow", "putMessageTimesTotal", "putMessageSizeTotal", "putTps", "getTotalTps"}

// replHAStatus: Java's mqadmin haStatus and ours against both brokers of
// a caught-up pair, and the slave's runtime info.
func replHAStatus(ctx context.Context, h *HARun) error {
	p := h.Pair
	topic := h.Name("hs")
	if err := createTopic(ctx, p, topic, 2); err != nil {
		return err
	}
	const sent = 200
	if _, err := sendBodies(ctx, p.Master.Addr, topic, "hs", 2, sent); err != nil {
		return err
	}
	maxOff, err := p.WaitCaughtUp(ctx, 60*time.Second)
	if err != nil {
		return err
	}
	// The master learns the slave's offset from its next report.
	if err := poll(ctx, 30*time.Second, "the master's HA status acknowledging the slave at its max offset", func() (bool, string, error) {
		st, err := haStatusRaw(ctx, p.Master.Addr)
		if err != nil {
			return false, err.Error(), nil
		}
		ok := len(st.HAConnectionInfo) == 1 && st.HAConnectionInfo[0].SlaveAckOffset == maxOff
		return ok, fmt.Sprintf("%+v", st), nil
	}); err != nil {
		return err
	}
	var problems []string
	for _, tool := range []struct {
		name string
		run  func(context.Context, *HARun, ...string) (string, error)
	}{{"Java mqadmin haStatus", javaAdmin}, {"bin/mqadmin haStatus", ourAdmin}} {
		out, err := tool.run(ctx, h, "haStatus", "-n", p.NamesrvAddr, "-b", p.Master.Addr)
		if err == nil {
			err = checkMasterStatus(tool.name+" -b master", out, maxOff)
		}
		if err != nil {
			problems = append(problems, err.Error())
		}
		out, err = tool.run(ctx, h, "haStatus", "-n", p.NamesrvAddr, "-b", p.Slave.Addr)
		if err == nil {
			err = checkSlaveStatus(tool.name+" -b slave", out, p.Master.HAAddr, maxOff)
		}
		if err != nil {
			problems = append(problems, err.Error())
		}
	}
	info, err := p.Slave.RuntimeInfo(ctx)
	if err != nil {
		return err
	}
	var missing []string
	for _, k := range slaveRuntimeKeys {
		if _, ok := info[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		problems = append(problems, fmt.Sprintf("slave runtime info lacks %v (has %s)", missing, strings.Join(sortedKeys(info), ",")))
	}
	want := map[string]string{"commitLogMaxOffset": strconv.FormatInt(maxOff, 10), "brokerActive": "false", "dispatchBehindBytes": "0",
		"msgPutTotalTodayNow": "0", "putMessageTimesTotal": strconv.Itoa(sent), "putMessageSizeTotal": strconv.FormatInt(maxOff, 10)}
	for _, k := range sortedKeys(want) {
		v := want[k]
		if got, ok := info[k]; ok && got != v {
			problems = append(problems, fmt.Sprintf("slave runtime info %s=%q, want %q (Java: %s)", k, got, v, runtimeWhy[k]))
		}
	}
	h.Note("haStatus (Java and ours) against master and slave at %d; slave runtime info: brokerActive=%s msgPutTotalTodayNow=%s putMessageTimesTotal=%s putMessageSizeTotal=%s dispatchBehindBytes=%s",
		maxOff, info["brokerActive"], info["msgPutTotalTodayNow"], info["putMessageTimesTotal"], info["putMessageSizeTotal"], info["dispatchBehindBytes"])
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "\n"))
	}
	return nil
}

var runtimeWhy = map[string]string{
	"commitLogMaxOffset":  "the slave's own commit-log max offset, equal to the master's after catch-up",
	"brokerActive":        "BrokerController.isSpecialServiceRunning — schedule and transaction-check services run only on a master",
	"dispatchBehindBytes": "the slave's reput has dispatched everything it holds",
	"msgPutTotalTodayNow": "BrokerStatsManager counts sends only; a slave stores none",
	"putMessageTimesTotal": "StoreStatsService on a slave counts the replicated messages its reput dispatches " +
		"(DefaultMessageStore.ReputMessageService: role SLAVE → singlePutMessageTopicTimesTotal)",
	"putMessageSizeTotal": "the replicated messages' bytes, counted by the slave's reput like putMessageTimesTotal",
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return slices.Clip(ks)
}
