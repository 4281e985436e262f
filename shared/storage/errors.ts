/** PostgreSQL's unique_violation: the database refused a duplicate. */
export function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: string } | null)?.code === "23505";
}

/**
 * SQLSTATEs that say nothing about the request, only that the database could
 * not take it now: connection exceptions (class 08), a server shutting down or
 * starting (57P01-57P03), too many connections, and transactions the server
 * rolled back so they can be retried (serialization failure, deadlock).
 */
const TRANSIENT_SQLSTATES = new Set(["57P01", "57P02", "57P03", "53300", "40001", "40P01"]);
/** Socket errors reaching a database server. */
const NETWORK_ERRNOS = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN"]);
/** What the pg client and pool throw, without a code, when the connection is gone or none can be had. */
const PG_CONNECTION_MESSAGES =
  /^(Connection terminated|Client has encountered a connection error|Client was closed and is not queryable|timeout exceeded when trying to connect|Cannot use a pool after calling end)/;
/** The MongoDB driver's (and mongoose's) errors for an unreachable or changing replica set. */
const MONGO_TRANSIENT_NAMES = new Set([
  "MongoNetworkError",
  "MongoNetworkTimeoutError",
  "MongoServerSelectionError",
  "MongooseServerSelectionError",
  "MongoNotConnectedError",
  "MongoTopologyClosedError",
]);
/** Server codes of a failover or shutdown: HostUnreachable, HostNotFound, NetworkTimeout, ShutdownInProgress, WriteConflict, NoSuchTransaction, PrimarySteppedDown, SocketException, NotWritablePrimary, InterruptedAtShutdown, InterruptedDueToReplStateChange, NotPrimaryNoSecondaryOk, NotPrimaryOrSecondary. */
const MONGO_TRANSIENT_CODES = new Set([6, 7, 89, 91, 112, 251, 189, 9001, 10107, 11600, 11602, 13435, 13436]);
const MONGO_TRANSIENT_LABELS = ["TransientTransactionError", "RetryableWriteError", "UnknownTransactionCommitResult"];

/**
 * Whether an error from a database driver means "the database is not
 * available right now" (a restart, a lost connection, a failover) rather than
 * anything about the request: such a request may succeed if sent again, so
 * it is answered 503 with Retry-After, not 500.
 */
export function isStorageUnavailable(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== "object" || depth > 3) return false;
  const e = err as { code?: unknown; name?: unknown; message?: unknown; hasErrorLabel?: unknown; cause?: unknown };
  if (typeof e.code === "string") {
    if (/^08/.test(e.code) || TRANSIENT_SQLSTATES.has(e.code) || NETWORK_ERRNOS.has(e.code)) return true;
  }
  if (typeof e.message === "string" && PG_CONNECTION_MESSAGES.test(e.message)) return true;
  if (typeof e.name === "string" && MONGO_TRANSIENT_NAMES.has(e.name)) return true;
  if (typeof e.name === "string" && e.name.startsWith("Mongo") && typeof e.code === "number" && MONGO_TRANSIENT_CODES.has(e.code)) return true;
  if (typeof e.hasErrorLabel === "function" && MONGO_TRANSIENT_LABELS.some((label) => (e.hasErrorLabel as (l: string) => boolean).call(err, label))) return true;
  return isStorageUnavailable(e.cause, depth + 1);
}
