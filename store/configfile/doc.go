// Package configfile persists the broker's JSON config files (topics.json,
// consumerOffset.json, subscriptionGroup.json, delayOffset.json) the way the
// Java broker keeps them: the previous content survives as <file>.bak, and
// a write is temp file → fsync → rename → fsync directory, so a crash leaves
// either the old or the new file, never a torn one.
package configfile
