package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"time"
)

// command is one mqadmin subcommand. setup registers its flags and returns
// the function that runs it once the flags are parsed.
type command struct {
	name  string
	desc  string
	setup func(fs *flag.FlagSet) func(a *admin) error
}

func commands() []command {
	return []command{
		{"updateTopic", "Update or create topic", setupUpdateTopic},
		{"deleteTopic", "Delete topic from broker and NameServer.", setupDeleteTopic},
		{"topicList", "Fetch all topic list from name server", setupTopicList},
		{"topicRoute", "Examine topic route info", setupTopicRoute},
		{"topicStatus", "Examine topic Status info", setupTopicStatus},
		{"clusterList", "List cluster infos", setupClusterList},
		{"brokerStatus", "Fetch broker runtime status data", setupBrokerStatus},
		{"consumerProgress", "Query consumers's progress, speed", setupConsumerProgress},
		{"queryMsgById", "Query Message by Id", setupQueryMsgByID},
		{"queryMsgByKey", "Query Message by Key", setupQueryMsgByKey},
		{"sendMessage", "Send a message", setupSendMessage},
		{"consumeMessage", "Consume message", setupConsumeMessage},
		{"updateSubGroup", "Update or create subscription group", setupUpdateSubGroup},
		{"resetOffsetByTime", "Reset consumer offset by timestamp(without client restart).", setupResetOffsetByTime},
		{"getBrokerConfig", "Get broker config by cluster or special broker!", setupGetBrokerConfig},
		{"haStatus", "Fetch ha runtime status data.", setupHAStatus},
		{"getControllerMetaData", "Get controller cluster's metadata.", setupGetControllerMetaData},
		{"getSyncStateSet", "Fetch syncStateSet for target brokers.", setupGetSyncStateSet},
		{"getBrokerEpoch", "Fetch broker epoch entries.", setupGetBrokerEpoch},
		{"electMaster", "Re-elect the specified broker as master.", setupElectMaster},
		{"cleanBrokerMetadata", "Clean metadata of broker on controller.", setupCleanBrokerMetadata},
		{"getControllerConfig", "Get controller config.", setupGetControllerConfig},
		{"updateControllerConfig", "Update controller config.", setupUpdateControllerConfig},
	}
}

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: mqadmin <command> [args]\n\nThe most commonly used mqadmin commands are:")
	cmds := commands()
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].name < cmds[j].name })
	for _, c := range cmds {
		fmt.Fprintf(w, "   %-20s %s\n", c.name, c.desc)
	}
	fmt.Fprintln(w, "\nSee 'mqadmin help <command>' for more information on a specific command.")
}

// parse finds the subcommand and parses its flags; it returns the runner
// and the admin settings.
func parse(args []string, errOut io.Writer) (exec func(*admin) error, ns string, timeout time.Duration, err error) {
	if len(args) == 0 || args[0] == "help" && len(args) == 1 {
		usage(errOut)
		return nil, "", 0, errors.New("no command")
	}
	name := args[0]
	rest := args[1:]
	help := false
	if name == "help" {
		name, rest, help = args[1], nil, true
	}
	for _, c := range commands() {
		if c.name != name {
			continue
		}
		fs := flag.NewFlagSet("mqadmin "+c.name, flag.ContinueOnError)
		fs.SetOutput(errOut)
		nsFlag := fs.String("n", os.Getenv("NAMESRV_ADDR"), "Name server address list, eg: '192.168.0.1:9876;192.168.0.2:9876'")
		to := fs.Duration("timeout", 10*time.Second, "timeout of each request")
		exec := c.setup(fs)
		if help {
			fmt.Fprintf(errOut, "usage: mqadmin %s [flags]   %s\n", c.name, c.desc)
			fs.PrintDefaults()
			return nil, "", 0, errors.New("help shown")
		}
		if err := fs.Parse(rest); err != nil {
			return nil, "", 0, err
		}
		if fs.NArg() > 0 {
			return nil, "", 0, fmt.Errorf("%s: unexpected arguments %q", c.name, fs.Args())
		}
		return exec, *nsFlag, *to, nil
	}
	usage(errOut)
	return nil, "", 0, fmt.Errorf("the command %s is not supported", name)
}

func run(args []string, out, errOut io.Writer) error {
	exec, ns, timeout, err := parse(args, errOut)
	if err != nil {
		return err
	}
	a := newAdmin(ns, out, timeout)
	defer a.close()
	return exec(a)
}

// need returns an error naming the first empty required flag.
func need(pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			return fmt.Errorf("missing required option: -%s", pairs[i])
		}
	}
	return nil
}
