// Package configfile writes config files the way Java's MixAll.string2File
// does (the broker's topics.json, consumerOffset.json…, the name server's
// kvConfig.json and namesrv.properties, the controller's
// controller.properties): the previous content survives as <file>.bak, and
// a write is temp file → fsync → rename → fsync directory, so a crash
// leaves either the old or the new file, never a torn one. Read falls back
// to the backup when the file is missing or empty.
package configfile
