import { z } from "zod";
import { InvalidRequestError } from "./errors";

/**
 * Validates `input` with a zod schema and throws `invalid_request` naming the
 * first offending field. Called at the top of every action; the schema is kept
 * out of Moleculer's `params` because the broker deep-clones those.
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue.path.length ? issue.path.join(".") : undefined;
  const message = field ? `Invalid '${field}': ${issue.message}` : issue.message;
  throw new InvalidRequestError(message, {
    issues: result.error.issues.map((i) => ({ field: i.path.join("."), message: i.message })),
  });
}
