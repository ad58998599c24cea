package message

// MessageSysFlag bits (Java MessageSysFlag).
const (
	CompressedFlag          int32 = 0x1
	MultiTagsFlag           int32 = 0x2
	TransactionNotType      int32 = 0x0
	TransactionPreparedType int32 = 0x4
	TransactionCommitType   int32 = 0x8
	TransactionRollbackType int32 = 0xC
	BornHostV6Flag          int32 = 0x10
	StoreHostV6Flag         int32 = 0x20
	NeedUnwrapFlag          int32 = 0x40
	InnerBatchFlag          int32 = 0x80
	CompressionLZ4Type      int32 = 0x100
	CompressionZSTDType     int32 = 0x200
	CompressionZLIBType     int32 = 0x300
	CompressionTypeMask     int32 = 0x700
	transactionMask         int32 = 0xC
)

// CompressionType names the algorithm in the sysFlag type bits.
type CompressionType uint8

// Compression types; Legacy (0) is read as zlib.
const (
	CompressionLegacy CompressionType = 0
	CompressionLZ4    CompressionType = 1
	CompressionZSTD   CompressionType = 2
	CompressionZLIB   CompressionType = 3
)

// TransactionValue returns the transaction type bits of flag.
func TransactionValue(flag int32) int32 { return flag & transactionMask }

// ResetTransactionValue replaces the transaction type bits of flag.
func ResetTransactionValue(flag, typ int32) int32 {
	return flag&^transactionMask | typ&transactionMask
}

// IsCompressed reports bit 0.
func IsCompressed(flag int32) bool { return flag&CompressedFlag != 0 }

// Compression returns the compression type bits of flag.
func Compression(flag int32) CompressionType {
	return CompressionType((flag & CompressionTypeMask) >> 8)
}
