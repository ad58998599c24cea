package autoswitch

import (
	"errors"
	"fmt"

	"github.com/rocketgo/rocketgo/store/epoch"
)

// ErrStaleEpoch refuses a role change to an epoch below the epoch file's
// last (Java: "newMasterEpoch < lastEpoch, fail to change to ...").
var ErrStaleEpoch = errors.New("autoswitch: master epoch below the last local epoch")

// BeginMasterEpoch is the epoch-file part of Java's changeToMaster: the
// broker calls it, with its store switched to a master role and the
// Client closed, before it starts the Server. Entries of newEpoch and
// later are dropped, then so are entries starting at or past maxPhy (an
// epoch that wrote nothing: Java fails to append the new entry after it,
// apache/rocketmq#9689), and (newEpoch, maxPhy) is appended.
func BeginMasterEpoch(f *epoch.File, newEpoch int32, maxPhy int64) error {
	if last := f.LastEpoch(); newEpoch < last {
		return fmt.Errorf("%w: %d < %d", ErrStaleEpoch, newEpoch, last)
	}
	if err := f.TruncateFromEpoch(newEpoch); err != nil {
		return err
	}
	if err := f.TruncateFromOffset(maxPhy); err != nil {
		return err
	}
	return f.Append(newEpoch, maxPhy)
}

// CheckSlaveEpoch is Java's changeToSlave check: a slave never follows a
// master whose epoch is below its own last epoch.
func CheckSlaveEpoch(f *epoch.File, masterEpoch int32) error {
	if last := f.LastEpoch(); masterEpoch < last {
		return fmt.Errorf("%w: %d < %d", ErrStaleEpoch, masterEpoch, last)
	}
	return nil
}
