package main

import (
	"errors"
	"flag"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/compat/fastjson"
	"github.com/rocketgo/rocketgo/compat/javaprops"
)

// Controller-mode subcommands (RIP-44), with the names, flags and output
// of Java's tools/command/controller, ha/GetSyncStateSetSubCommand and
// broker/GetBrokerEpochSubCommand. Like Java, the commands that change or
// read replicated state first ask -a for the leader's address
// (CONTROLLER_GET_METADATA_INFO) and then send the request there.

// maxReplyIDs bounds the ids and entries read from one reply body.
const maxReplyIDs = 1 << 16

// nullable prints s the way Java prints a null String: "null".
func nullable(s string) string {
	if s == "" {
		return "null"
	}
	return s
}

// splitAddrs splits an address list on ';' as Java's String.split does
// (trailing empty parts dropped, inner ones kept).
func splitAddrs(list string) []string {
	parts := strings.Split(strings.TrimSpace(list), ";")
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

func (a *admin) controllerMetaData(addr string) (header.GetMetaDataResponse, error) {
	var h header.GetMetaDataResponse
	resp, err := a.call(addr, request(codec.ReqControllerGetMetadataInfo))
	if err != nil {
		return h, err
	}
	if err := h.Decode(resp); err != nil {
		return h, fmt.Errorf("controller metadata from %s: %w", addr, err)
	}
	return h, nil
}

// controllerLeader returns the leader's address as addr reports it.
func (a *admin) controllerLeader(addr string) (string, error) {
	md, err := a.controllerMetaData(addr)
	if err != nil {
		return "", err
	}
	if md.ControllerLeaderAddress == "" {
		return "", fmt.Errorf("controller %s knows no leader", addr)
	}
	return md.ControllerLeaderAddress, nil
}

// repeat runs once, or forever every -i seconds when -i was given
// (Java's default is 3 s when -i has no number).
func repeat(name string, interval *string, set func() bool, once func() error) error {
	if !set() {
		return once()
	}
	every := 3
	if s := strings.TrimSpace(*interval); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("%s: -i %q: %w", name, s, err)
		}
		every = n
	}
	for {
		if err := once(); err != nil {
			return err
		}
		time.Sleep(time.Duration(every) * time.Second)
	}
}

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) func() bool {
	return func() bool {
		found := false
		fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
		return found
	}
}

// setupGetControllerMetaData is Java's getControllerMetaData.
func setupGetControllerMetaData(fs *flag.FlagSet) func(*admin) error {
	addr := fs.String("a", "", "the address of controller")
	return func(a *admin) error {
		if err := need("a", *addr); err != nil {
			return err
		}
		md, err := a.controllerMetaData(strings.TrimSpace(*addr))
		if err != nil {
			return err
		}
		a.printf("\n#ControllerGroup\t%s", nullable(md.Group))
		a.printf("\n#ControllerLeaderId\t%s", nullable(md.ControllerLeaderID))
		a.printf("\n#ControllerLeaderAddress\t%s", nullable(md.ControllerLeaderAddress))
		if md.Peers != "" {
			for _, p := range splitAddrs(md.Peers) {
				a.printf("\n#Peer:\t%s", p)
			}
		}
		a.printf("\n")
		return nil
	}
}

// setupGetSyncStateSet is Java's getSyncStateSet: the replicas of one
// broker set (-b) or of every broker set of a cluster (-c, names from
// the name server), from the controller leader.
func setupGetSyncStateSet(fs *flag.FlagSet) func(*admin) error {
	addr := fs.String("a", "", "the address of controller")
	cluster := fs.String("c", "", "which cluster")
	broker := fs.String("b", "", "which broker to fetch")
	interval := fs.String("i", "", "the interval(second) of get info")
	return func(a *admin) error {
		if err := need("a", *addr); err != nil {
			return err
		}
		ctrl := splitAddrs(*addr)[0]
		return repeat("getSyncStateSet", interval, flagSet(fs, "i"), func() error {
			var names []string
			switch {
			case strings.TrimSpace(*broker) != "":
				names = []string{strings.TrimSpace(*broker)}
			case strings.TrimSpace(*cluster) != "":
				var err error
				if names, err = a.brokerNamesOf(strings.TrimSpace(*cluster)); err != nil {
					return err
				}
			default:
				return errors.New("need -b brokerName or -c clusterName")
			}
			return printSyncStateSets(a, ctrl, names)
		})
	}
}

// brokerNamesOf is Java's CommandUtil.fetchBrokerNameByClusterName.
func (a *admin) brokerNamesOf(cluster string) ([]string, error) {
	ci, err := a.clusterInfo()
	if err != nil {
		return nil, err
	}
	for _, c := range ci.ClusterAddrTable {
		if c.Cluster == cluster && len(c.BrokerNames) > 0 {
			names := append([]string(nil), c.BrokerNames...)
			sort.Strings(names)
			return names, nil
		}
	}
	return nil, errors.New("Make sure the specified clusterName exists or the name server connected to is correct.")
}

func printSyncStateSets(a *admin, ctrl string, names []string) error {
	if len(names) == 0 {
		return nil
	}
	leader, err := a.controllerLeader(ctrl)
	if err != nil {
		return err
	}
	req := request(codec.ReqControllerGetSyncStateData)
	req.Body = body.AppendBrokerNames(nil, names)
	resp, err := a.call(leader, req)
	if err != nil {
		return err
	}
	entries, err := body.DecodeBrokerReplicasInfo(resp.Body)
	if err != nil {
		return err
	}
	for _, e := range entries {
		in := e.Info
		master := "null" // compat: Java prints a null Long with %d as "null"
		if in.MasterBrokerID != 0 {
			master = strconv.FormatInt(in.MasterBrokerID, 10)
		}
		a.printf("\n#brokerName\t%s\n#MasterBrokerId\t%s\n#MasterAddr\t%s\n#MasterEpoch\t%d\n#SyncStateSetEpoch\t%d\n#SyncStateSetNums\t%d\n",
			e.BrokerName, master, nullable(in.MasterAddress), in.MasterEpoch, in.SyncStateSetEpoch, len(in.InSync))
		for _, r := range in.InSync {
			a.printf("\nInSyncReplica:\t%s\n", replicaString(r))
		}
		for _, r := range in.NotInSync {
			a.printf("\nNotInSyncReplica:\t%s\n", replicaString(r))
		}
	}
	return nil
}

// replicaString is Java's ReplicaIdentity.toString.
func replicaString(r body.ReplicaIdentity) string {
	return fmt.Sprintf("ReplicaIdentity{brokerName='%s', brokerId=%d, brokerAddress='%s', alive=%t}",
		r.BrokerName, r.BrokerID, r.BrokerAddress, r.Alive)
}

// setupElectMaster is Java's electMaster (ReElectMasterSubCommand):
// CONTROLLER_ELECT_MASTER with designateElect=true at the leader.
func setupElectMaster(fs *flag.FlagSet) func(*admin) error {
	addr := fs.String("a", "", "The address of controller")
	id := fs.String("b", "", "The id of the broker which requires to become master")
	name := fs.String("bn", "", "The broker name of the replicas that require to be manipulated")
	cluster := fs.String("c", "", "the clusterName of broker")
	return func(a *admin) error {
		if err := need("a", *addr, "b", *id, "bn", *name, "c", *cluster); err != nil {
			return err
		}
		brokerID, err := strconv.ParseInt(strings.TrimSpace(*id), 10, 64)
		if err != nil {
			return fmt.Errorf("electMaster: -b %q: %w", *id, err)
		}
		leader, err := a.controllerLeader(strings.TrimSpace(*addr))
		if err != nil {
			return err
		}
		clusterName, brokerName := strings.TrimSpace(*cluster), strings.TrimSpace(*name)
		req := request(codec.ReqControllerElectMaster)
		(&header.ElectMasterRequest{ClusterName: clusterName, BrokerName: brokerName, BrokerID: brokerID,
			DesignateElect: true, InvokeTime: time.Now().UnixMilli()}).Encode(req)
		resp, err := a.call(leader, req)
		if err != nil {
			return err
		}
		var h header.ElectMasterResponse
		if err := h.Decode(resp); err != nil {
			return fmt.Errorf("electMaster: %w", err)
		}
		a.printf("\n#ClusterName\t%s", clusterName)
		a.printf("\n#BrokerName\t%s", brokerName)
		a.printf("\n#BrokerMasterAddr\t%s", nullable(h.MasterAddress))
		a.printf("\n#MasterEpoch\t%d", h.MasterEpoch)
		a.printf("\n#SyncStateSetEpoch\t%d\n", h.SyncStateSetEpoch)
		addrs, err := topLevelBrokerAddrs(resp.Body)
		if err != nil {
			return fmt.Errorf("electMaster: %w", err)
		}
		for _, ba := range addrs {
			a.printf("\t#Broker\t%d\t%s\n", ba.ID, ba.Addr)
		}
		return nil
	}
}

// topLevelBrokerAddrs reads the body as a BrokerMemberGroup, as Java's
// admin does. compat: the controller sends an ElectMasterResponseBody,
// whose addresses sit under "brokerMemberGroup", so Java's admin finds
// none and prints no #Broker lines; we read the same way.
func topLevelBrokerAddrs(b []byte) ([]body.BrokerAddr, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var out []body.BrokerAddr
	rd := fastjson.NewReader(b)
	for rd.ObjectStart(); rd.More(); {
		if rd.Key() != "brokerAddrs" || rd.Null() {
			rd.Skip()
			continue
		}
		for rd.ObjectStart(); rd.More(); {
			id, err := strconv.ParseInt(rd.Key(), 10, 64)
			if err != nil || len(out) >= maxReplyIDs {
				rd.Fail("broker id key")
			}
			out = append(out, body.BrokerAddr{ID: id, Addr: rd.String()})
		}
	}
	if err := rd.End(); err != nil {
		return nil, fmt.Errorf("broker member group: %w", err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// setupCleanBrokerMetadata is Java's cleanBrokerMetadata
// (CleanControllerBrokerMetaSubCommand): CLEAN_BROKER_DATA at the leader.
func setupCleanBrokerMetadata(fs *flag.FlagSet) func(*admin) error {
	addr := fs.String("a", "", "The address of controller")
	ids := fs.String("b", "", "The brokerController id list which requires to clean metadata. eg: 1;2;3, means that clean broker-1, broker-2 and broker-3")
	name := fs.String("bn", "", "The broker name of the replicas that require to be manipulated")
	cluster := fs.String("c", "", "The clusterName of broker")
	living := fs.Bool("l", false, "Whether clean up living brokers,default value is false")
	return func(a *admin) error {
		if err := need("a", *addr, "bn", *name); err != nil {
			return err
		}
		clusterName := strings.TrimSpace(*cluster)
		if !*living && clusterName == "" {
			return errors.New("cleanLivingBroker option is false, clusterName option can not be empty.")
		}
		// compat: Java's check of the -b format never runs (a lazy stream
		// without a terminal operation); the list goes to the controller as
		// given, and the controller judges it.
		leader, err := a.controllerLeader(strings.TrimSpace(*addr))
		if err != nil {
			return err
		}
		brokerName := strings.TrimSpace(*name)
		req := request(codec.ReqCleanBrokerData)
		(&header.CleanControllerBrokerDataRequest{ClusterName: clusterName, BrokerName: brokerName,
			BrokerControllerIdsToClean: strings.TrimSpace(*ids), IsCleanLivingBroker: *living,
			InvokeTime: time.Now().UnixMilli()}).Encode(req)
		if _, err := a.call(leader, req); err != nil {
			return err
		}
		a.printf("clear broker %s metadata from controller success! \n", brokerName)
		return nil
	}
}

// setupGetControllerConfig is Java's getControllerConfig: the running
// configuration of every controller in -a.
func setupGetControllerConfig(fs *flag.FlagSet) func(*admin) error {
	addr := fs.String("a", "", "Controller address list, eg: 192.168.0.1:9878;192.168.0.2:9878")
	return func(a *admin) error {
		if err := need("a", *addr); err != nil {
			return err
		}
		for _, c := range splitAddrs(*addr) {
			resp, err := a.call(c, request(codec.ReqGetControllerConfig))
			if err != nil {
				return err
			}
			props, err := javaprops.Parse(resp.Body)
			if err != nil {
				return fmt.Errorf("config of %s: %w", c, err)
			}
			// Java iterates a Properties (hash order); we keep the
			// controller's order, which is stable.
			a.printf("============%s============\n", c)
			for _, e := range props {
				a.printf("%-50s=  %s\n", e.Key, e.Value)
			}
		}
		return nil
	}
}

// setupUpdateControllerConfig is Java's updateControllerConfig: one key
// sent to every controller in -a; the last refusal is reported.
func setupUpdateControllerConfig(fs *flag.FlagSet) func(*admin) error {
	addr := fs.String("a", "", "Controller address list, eg: 192.168.0.1:9878;192.168.0.2:9878")
	key := fs.String("k", "", "config key")
	value := fs.String("v", "", "config value")
	return func(a *admin) error {
		if err := need("a", *addr, "k", *key, "v", *value); err != nil {
			return err
		}
		k, v := strings.TrimSpace(*key), strings.TrimSpace(*value)
		servers := splitAddrs(*addr)
		var props javaprops.Props
		props.Set(k, v)
		var last error
		for _, c := range servers {
			req := request(codec.ReqUpdateControllerConfig)
			req.Body = javaprops.AppendPlain(nil, props) // MixAll.properties2String
			if _, err := a.call(c, req); err != nil {
				var re *respError
				if !errors.As(err, &re) {
					return err
				}
				last = err
			}
		}
		if last != nil {
			return last
		}
		// Java prints the List: "[a, b]".
		a.printf("update controller config success![%s]\n%s : %s\n", strings.Join(servers, ", "), k, v)
		return nil
	}
}

// setupGetBrokerEpoch is Java's getBrokerEpoch: GET_BROKER_EPOCH_CACHE of
// every broker (master and slaves) of a broker name (-b) or cluster (-c),
// found through the name server.
func setupGetBrokerEpoch(fs *flag.FlagSet) func(*admin) error {
	cluster := fs.String("c", "", "which cluster")
	broker := fs.String("b", "", "which broker to fetch")
	interval := fs.String("i", "", "the interval(second) of get info")
	return func(a *admin) error {
		return repeat("getBrokerEpoch", interval, flagSet(fs, "i"), func() error {
			var addrs []string
			var err error
			switch {
			case strings.TrimSpace(*broker) != "":
				addrs, err = a.brokerAddrsOf(strings.TrimSpace(*broker), "")
			case strings.TrimSpace(*cluster) != "":
				addrs, err = a.brokerAddrsOf("", strings.TrimSpace(*cluster))
			default:
				return errors.New("need -b brokerName or -c clusterName")
			}
			if err != nil {
				return err
			}
			for _, addr := range addrs {
				if err := printEpochCache(a, addr); err != nil {
					return err
				}
			}
			return nil
		})
	}
}

// brokerAddrsOf is Java's CommandUtil.fetchMasterAndSlaveAddrByBrokerName
// (name set) or fetchMasterAndSlaveAddrByClusterName, sorted (Java: a
// HashSet). An unknown name yields nothing; an unknown cluster prints
// Java's "[error]" line.
func (a *admin) brokerAddrsOf(name, cluster string) ([]string, error) {
	ci, err := a.clusterInfo()
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	if name != "" {
		names[name] = true
	} else {
		found := false
		for _, c := range ci.ClusterAddrTable {
			if c.Cluster == cluster {
				found = true
				for _, n := range c.BrokerNames {
					names[n] = true
				}
			}
		}
		if !found {
			a.printf("[error] %s", "Make sure the specified clusterName exists or the name server connected to is correct.")
		}
	}
	seen := map[string]bool{}
	var out []string
	for _, bd := range ci.BrokerAddrTable {
		if !names[bd.BrokerName] {
			continue
		}
		for _, ba := range bd.BrokerAddrs {
			if !seen[ba.Addr] {
				seen[ba.Addr] = true
				out = append(out, ba.Addr)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// epochCache is Java's EpochEntryCache.
type epochCache struct {
	clusterName, brokerName string
	brokerID, maxOffset     int64
	entries                 []epochEntry
}

type epochEntry struct {
	epoch                  int32
	startOffset, endOffset int64
}

func decodeEpochCache(b []byte) (epochCache, error) {
	var c epochCache
	rd := fastjson.NewReader(b)
	for rd.ObjectStart(); rd.More(); {
		switch rd.Key() {
		case "clusterName":
			c.clusterName = rd.String()
		case "brokerName":
			c.brokerName = rd.String()
		case "brokerId":
			c.brokerID = rd.Int()
		case "maxOffset":
			c.maxOffset = rd.Int()
		case "epochList":
			for rd.ArrayStart(); rd.More(); {
				if len(c.entries) >= maxReplyIDs {
					rd.Fail("too many epoch entries")
					break
				}
				var e epochEntry
				for rd.ObjectStart(); rd.More(); {
					switch rd.Key() {
					case "epoch":
						e.epoch = int32(rd.Int())
					case "startOffset":
						e.startOffset = rd.Int()
					case "endOffset":
						e.endOffset = rd.Int()
					default:
						rd.Skip()
					}
				}
				c.entries = append(c.entries, e)
			}
		default:
			rd.Skip()
		}
	}
	if err := rd.End(); err != nil {
		return c, fmt.Errorf("epoch entry cache: %w", err)
	}
	return c, nil
}

func printEpochCache(a *admin, addr string) error {
	resp, err := a.call(addr, request(codec.ReqGetBrokerEpochCache))
	if err != nil {
		return err
	}
	c, err := decodeEpochCache(resp.Body)
	if err != nil {
		return fmt.Errorf("%s: %w", addr, err)
	}
	a.printf("\n#clusterName\t%s\n#brokerName\t%s\n#brokerAddr\t%s\n#brokerId\t%d",
		nullable(c.clusterName), nullable(c.brokerName), addr, c.brokerID)
	for i, e := range c.entries {
		if i == len(c.entries)-1 {
			e.endOffset = c.maxOffset // as Java: the open last epoch ends at maxOffset
		}
		a.printf("\n#Epoch: EpochEntry{epoch=%d, startOffset=%d, endOffset=%d}", e.epoch, e.startOffset, e.endOffset)
	}
	a.printf("\n")
	return nil
}
