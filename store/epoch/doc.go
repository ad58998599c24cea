// Package epoch keeps a broker's epoch file in controller mode: the list of
// (epoch, start offset) pairs saying from which commit-log offset each
// master epoch wrote, in Java's CheckpointFile text format
// (`epochFileCheckpoint` and its `.bak`), so that a store directory and its
// epoch file move between a Java broker and ours.
//
// The format: the entry count on the first line, the CRC32 of the entry
// lines (masked to 31 bits; 0 means unchecked) on the second, then one
// "<epoch>-<startOffset>" line per entry, each ending in '\n'.
//
// Unlike Java's, every rewrite is crash-safe: the new content goes to a
// temporary file that is synced and renamed over the old one after the old
// one was copied to the backup, so a kill at any point leaves a valid file
// or a valid backup (apache/rocketmq#10666 is the broker's truncation
// leaving a stale tail; this package is the half of that fix that concerns
// the epoch file).
package epoch
