/**
 * Which driver errors mean "the database is not available right now" (503
 * with Retry-After) rather than something about the request (shared/storage/errors.ts).
 * The errors are the drivers' own classes, built as the drivers build them.
 */
import { MongoNetworkError, MongoServerError } from "mongodb";
import { DatabaseError } from "pg";
import { NotFoundError, ServiceUnavailableError } from "../../shared/errors";
import { isStorageUnavailable, isUniqueViolation } from "../../shared/storage/errors";

const pgError = (code: string, message = "server error") => Object.assign(new DatabaseError(message, message.length, "error"), { code });
const socketError = (code: string) => Object.assign(new Error(`connect ${code} 127.0.0.1:5432`), { code, errno: -111, syscall: "connect" });

describe("isStorageUnavailable", () => {
  test.each([
    ["PostgreSQL: the backend was terminated (pg_terminate_backend, shutdown)", pgError("57P01", "terminating connection due to administrator command")],
    ["PostgreSQL: crash shutdown", pgError("57P02")],
    ["PostgreSQL: starting up or in recovery", pgError("57P03", "the database system is starting up")],
    ["PostgreSQL: too many connections", pgError("53300")],
    ["PostgreSQL: connection exception class 08", pgError("08006")],
    ["PostgreSQL: serialization failure, to be retried", pgError("40001")],
    ["PostgreSQL: deadlock, to be retried", pgError("40P01")],
    ["pg: connection terminated", new Error("Connection terminated unexpectedly")],
    ["pg: client not queryable after an error", new Error("Client has encountered a connection error and is not queryable")],
    ["pg-pool: no connection within connectionTimeoutMillis", new Error("timeout exceeded when trying to connect")],
    ["server refusing connections", socketError("ECONNREFUSED")],
    ["connection reset", socketError("ECONNRESET")],
    ["MongoDB: network error", new MongoNetworkError("connection 3 to 127.0.0.1:27017 closed")],
    ["MongoDB: primary stepped down", new MongoServerError({ message: "not primary", code: 10107, codeName: "NotWritablePrimary" })],
    ["MongoDB: shutdown in progress", new MongoServerError({ message: "shutting down", code: 91, codeName: "ShutdownInProgress" })],
    ["MongoDB: transient transaction error", new MongoServerError({ message: "write conflict", code: 112, errorLabels: ["TransientTransactionError"] })],
    ["wrapped, as a cause", Object.assign(new Error("refund failed"), { cause: socketError("ECONNREFUSED") })],
  ])("%s: unavailable", (_name, err) => {
    expect(isStorageUnavailable(err)).toBe(true);
  });

  test.each([
    ["PostgreSQL: unique violation (a duplicate, answered as such)", pgError("23505")],
    ["PostgreSQL: syntax error (a bug)", pgError("42601")],
    ["PostgreSQL: check violation", pgError("23514")],
    ["MongoDB: duplicate key", new MongoServerError({ message: "E11000 duplicate key", code: 11000 })],
    ["MongoDB: a validation failure", new MongoServerError({ message: "Document failed validation", code: 121 })],
    ["our own error", new NotFoundError("No sale")],
    ["already mapped", new ServiceUnavailableError("down")],
    ["a plain bug", new TypeError("Cannot read properties of undefined")],
    ["not an error", "ECONNREFUSED"],
    ["nothing", null],
  ])("%s: not unavailable", (_name, err) => {
    expect(isStorageUnavailable(err)).toBe(false);
  });

  test("a unique violation is still recognised as one", () => {
    expect(isUniqueViolation(pgError("23505"))).toBe(true);
  });
});
