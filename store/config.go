package store

import (
	"errors"
	"fmt"
	"github.com/rocketgo/rocketgo/store/iolane"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/rocketgo/rocketgo/codec/message"
)

// FlushType is Java's FlushDiskType.
type FlushType int

// Flush modes.
const (
	AsyncFlush FlushType = iota
	SyncFlush
)

func (f FlushType) String() string {
	if f == SyncFlush {
		return "SYNC_FLUSH"
	}
	return "ASYNC_FLUSH"
}

// Config holds the store settings; defaults follow Java's MessageStoreConfig.
type Config struct {
	// BackgroundIO serialises the store's background disk calls (consume-queue
	// and index syncs, checkpoint fsyncs, prefaulting): see package iolane.
	// Nil: the store makes its own.
	BackgroundIO *iolane.Lane

	RootDir      string
	CommitLogDir string // default RootDir/commitlog

	MappedFileSizeCommitLog    int64 // 1 GiB
	MappedFileSizeConsumeQueue int64 // 300000 * 20

	FlushDiskType                  FlushType
	FlushIntervalCommitLog         time.Duration // 500ms
	FlushCommitLogLeastPages       int           // 4
	FlushCommitLogThoroughInterval time.Duration // 10s
	FlushIntervalConsumeQueue      time.Duration // 1s
	SyncFlushTimeout               time.Duration // 5s

	MaxMessageSize int // 4 MiB

	// BrokerRole is the role the store opens in (SetRole changes it):
	// ASYNC_MASTER (default), SYNC_MASTER or SLAVE.
	BrokerRole Role
	// InSyncReplicas is the number of replicas, the master included, a
	// SYNC_MASTER put needs before it completes (Java inSyncReplicas, 1;
	// at 1 or less a SYNC_MASTER put waits for no slave, as in Java 5.x).
	InSyncReplicas int
	// SlaveTimeout bounds a put's wait for replication; past it the put
	// is answered FlushSlaveTimeout (Java slaveTimeout, 3s).
	SlaveTimeout time.Duration

	FileReservedTime time.Duration // 72h
	DeleteWhen       string        // "04" (hours separated by ';')
	// Disk usage (percent of the file system holding the commit log, or
	// the store root if fuller), checked every CleanResourceInterval as
	// Java's CleanCommitLogService does:
	//   above DiskMaxUsedSpaceRatio (75, clamped to 10..95) expired
	//     segments are deleted at any hour;
	//   above DiskSpaceCleanForciblyRatio (85, clamped to 30..85) segments
	//     are deleted whatever their age when CleanFileForciblyEnable
	//     (true);
	//   above DiskSpaceWarningLevelRatio (90, clamped to 35..90) puts are
	//     refused with ErrDiskFull; at or below the forcible ratio they are
	//     accepted again.
	// A failed allocation (ENOSPC) refuses puts at once and deletes
	// expired segments at the next check whatever the hour; the same
	// check accepts puts again if usage is at or below the forcible ratio.
	DiskMaxUsedSpaceRatio       int
	DiskSpaceCleanForciblyRatio int
	DiskSpaceWarningLevelRatio  int
	CleanFileForciblyEnable     bool
	CleanResourceInterval       time.Duration // 10s
	// usage replaces the statfs reading of the disk usage: percent used
	// and free bytes (tests).
	usage func() (float64, int64)

	MaxHashSlotNum     int // 5,000,000
	MaxIndexNum        int // 20,000,000
	MessageIndexEnable bool

	// CheckCRCOnRecover validates body CRCs during recovery (true).
	CheckCRCOnRecover bool

	// TagsCode computes the consume-queue tags code of a record (it must
	// be recomputable from the record, for recovery). Nil = TagsHash of
	// TAGS. The broker sets it to return the delivery time for
	// SCHEDULE_TOPIC_XXXX, as Java does.
	TagsCode func(topic, props string, storeTimestamp int64) int64

	Logger *slog.Logger
	// Now is the clock (tests); nil = time.Now.
	Now func() time.Time
}

// DefaultConfig returns Java's defaults rooted at root.
func DefaultConfig(root string) Config {
	return Config{
		RootDir:                        root,
		CommitLogDir:                   filepath.Join(root, "commitlog"),
		MappedFileSizeCommitLog:        1 << 30,
		MappedFileSizeConsumeQueue:     300000 * CQUnitSize,
		FlushDiskType:                  AsyncFlush,
		FlushIntervalCommitLog:         500 * time.Millisecond,
		FlushCommitLogLeastPages:       4,
		FlushCommitLogThoroughInterval: 10 * time.Second,
		FlushIntervalConsumeQueue:      time.Second,
		SyncFlushTimeout:               5 * time.Second,
		MaxMessageSize:                 4 << 20,
		InSyncReplicas:                 1,
		SlaveTimeout:                   3 * time.Second,
		FileReservedTime:               72 * time.Hour,
		DeleteWhen:                     "04",
		DiskMaxUsedSpaceRatio:          75,
		DiskSpaceCleanForciblyRatio:    85,
		DiskSpaceWarningLevelRatio:     90,
		CleanFileForciblyEnable:        true,
		CleanResourceInterval:          10 * time.Second,
		MaxHashSlotNum:                 5000000,
		MaxIndexNum:                    20000000,
		MessageIndexEnable:             true,
		CheckCRCOnRecover:              true,
	}
}

// Validate checks cfg and fills derived defaults.
func (c *Config) Validate() error {
	if c.RootDir == "" {
		return errors.New("store: config: RootDir is empty")
	}
	if c.CommitLogDir == "" {
		c.CommitLogDir = filepath.Join(c.RootDir, "commitlog")
	}
	if c.MappedFileSizeCommitLog < 64<<10 {
		return fmt.Errorf("store: config: MappedFileSizeCommitLog %d too small", c.MappedFileSizeCommitLog)
	}
	if c.MappedFileSizeConsumeQueue <= 0 || c.MappedFileSizeConsumeQueue%CQUnitSize != 0 {
		return fmt.Errorf("store: config: MappedFileSizeConsumeQueue %d not a multiple of %d", c.MappedFileSizeConsumeQueue, CQUnitSize)
	}
	if c.MaxMessageSize <= 0 || int64(c.MaxMessageSize)+message.BlankLen > c.MappedFileSizeCommitLog {
		return fmt.Errorf("store: config: MaxMessageSize %d must fit a commit-log segment", c.MaxMessageSize)
	}
	if c.FlushIntervalCommitLog <= 0 {
		c.FlushIntervalCommitLog = 500 * time.Millisecond
	}
	if c.FlushCommitLogThoroughInterval <= 0 {
		c.FlushCommitLogThoroughInterval = 10 * time.Second
	}
	if c.FlushIntervalConsumeQueue <= 0 {
		c.FlushIntervalConsumeQueue = time.Second
	}
	if c.SyncFlushTimeout <= 0 {
		c.SyncFlushTimeout = 5 * time.Second
	}
	if c.SlaveTimeout <= 0 {
		c.SlaveTimeout = 3 * time.Second
	}
	if c.BrokerRole < AsyncMaster || c.BrokerRole > Slave {
		return fmt.Errorf("store: config: unknown BrokerRole %d", c.BrokerRole)
	}
	if c.CleanResourceInterval <= 0 {
		c.CleanResourceInterval = 10 * time.Second
	}
	if c.MaxHashSlotNum <= 0 || c.MaxIndexNum <= 0 {
		return errors.New("store: config: MaxHashSlotNum and MaxIndexNum must be positive")
	}
	// compat: Java clamps the three ratios rather than rejecting them.
	c.DiskMaxUsedSpaceRatio = min(max(c.DiskMaxUsedSpaceRatio, 10), 95)
	c.DiskSpaceCleanForciblyRatio = min(max(c.DiskSpaceCleanForciblyRatio, 30), 85)
	c.DiskSpaceWarningLevelRatio = min(max(c.DiskSpaceWarningLevelRatio, 35), 90)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return nil
}
