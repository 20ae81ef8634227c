package store

// TEMPORARY: stands in for hostkit/frame until it is generated; removed
// once `go build ./hostkit/frame` succeeds.
var frame = struct {
	CodeDBSQLError, CodeDBQuotaExceeded, CodeDBImportInvalid, CodeDBResultTooLarge, CodeDBTimeout string
	MaxDBFrameBytes, MaxArtifactBytes                                                             int
}{"DB_SQL_ERROR", "DB_QUOTA_EXCEEDED", "DB_IMPORT_INVALID", "DB_RESULT_TOO_LARGE", "DB_TIMEOUT", 8 << 20, 5 << 20}
