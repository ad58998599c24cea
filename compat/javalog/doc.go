// Package javalog writes a server's log in the Java broker's file layout,
// so log collection set up for Java keeps working: under
// <home>/logs/rocketmqlogs/ (Java's ${user.home}/logs/rocketmqlogs), one
// file per concern — broker.log (namesrv.log, controller.log for those
// processes), store.log, remoting.log — each line in Java's logback
// pattern "%d{yyy-MM-dd HH:mm:ss,GMT+8} %p %t - %m%n", rolled at a size
// into otherdays/<name>.<i>.log.gz with a fixed window of indexes, as
// Java's FixedWindowRollingPolicy does.
//
// A record goes to the file of the package its message names: our
// messages start with their package ("transport: …", "store: …", "ha: …");
// transport ones go to remoting.log, the store's and replication's to
// store.log, everything else to the process's own file. The slog
// attributes follow the message as key=value pairs.
package javalog
