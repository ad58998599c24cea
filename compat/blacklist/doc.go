// Package blacklist decides which configuration keys a remote
// UPDATE_BROKER_CONFIG or UPDATE_NAMESRV_CONFIG may not change.
//
// Java keeps a configBlackList per server (broker "configBlackList;
// brokerConfigPath", name server "configBlackList;configStorePath;
// kvConfigPath", each plus hard-coded rocketmqHome and configBlackList),
// added after remote config updates led to command execution
// (CVE-2023-33246: rocketmqHome and filterServerNums made the broker run a
// script of the caller's choosing) and to writing arbitrary files
// (CVE-2023-37582: the name server's configStorePath). Java still accepts
// storePathRootDir, fileReservedTime and the rest; we do not. Refused is
// the operator's list plus fixed rules no configuration can lift:
//
//	names a file or directory   suffix Path Paths Dir Dirs File Home,
//	                            prefix storePath
//	loads code or a process     suffix Provider PlugIn Plugin Class,
//	                            filterServerNums
//	turns a protection off      prefix acl authentication authorization,
//	                            initAuthenticationUser,
//	                            innerClientAuthenticationCredentials,
//	                            listenIP, bindAddress, maxTopicQueueNums,
//	                            the network and memory bounds (write-buffer
//	                            watermarks, unsent/unread/in-flight/header
//	                            limits, frameReadTimeoutMillis, held-pull and
//	                            query caps, the name server's registration and
//	                            KV caps)
//	deletes kept data           fileReservedTime, cleanFileForciblyEnable,
//	                            diskMaxUsedSpaceRatio,
//	                            diskSpaceCleanForciblyRatio,
//	                            diskSpaceWarningLevelRatio
//	fixes the store's layout    prefix mappedFileSize mapperFileSize
//	guards this list            configBlackList,
//	                            refuseSensitiveRemoteConfig,
//	                            sensitiveRemoteConfigKeys
//
// These settings are changed in the config file and take effect at a
// restart, by someone who can already write that file.
//
// Policy goes further than Java, whose servers refuse only their
// configBlackList: while refuseSensitiveRemoteConfig is on (the default,
// in broker.conf, the name server's and the controller's config files) a
// remote update also refuses the keys that redirect or re-home a server
// (each server names its own: the broker's namesrvAddr, the address-server
// and DNS-lookup switches, its election priority and learner flag; the
// name server's supportActingMaster) and every key the operator lists in
// sensitiveRemoteConfigKeys (brokerPermission, to keep mqadmin
// updateBrokerConfig from draining a broker, for one). The answer is the
// black list's: NO_PERMISSION, "Can not update config in black list.",
// nothing applied or persisted. With the policy off those keys are taken
// as Java takes them.
//
// Without authentication every caller is anonymous, so the policy holds
// for all of them. The auth module, once it exists, hooks in at
// Policy.Refuses: a super user's update passes the policy (never the
// black list or the start-up keys), anyone else's is refused as now.
package blacklist
