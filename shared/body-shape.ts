/**
 * Shape limits of a parsed JSON body, checked at the gateway before the body
 * is merged into an action's params (moleculer-web merges with
 * Object.assign, which would turn an own `__proto__` key, as JSON.parse makes
 * it, into the params' prototype and drop it silently).
 *
 * - No key named `__proto__`, `constructor` or `prototype`, at any depth:
 *   none is a field of any request, and each is a prototype-pollution vector
 *   for code that copies objects.
 * - Objects and arrays nest at most MAX_JSON_DEPTH levels (the body itself is
 *   level 1): no request needs more, and deep bodies cost recursive code
 *   (zod, logging, serialisation between nodes) stack and time.
 *
 * Iterative, so a hostile body cannot overflow the stack here either.
 */
export const MAX_JSON_DEPTH = 20;

export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"]);

export type BodyShapeProblem = { kind: "forbidden_key"; field: string } | { kind: "too_deep"; field: string };

export function findBodyShapeProblem(input: unknown, maxDepth = MAX_JSON_DEPTH): BodyShapeProblem | null {
  const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value: input, path: "", depth: 1 }];
  while (stack.length) {
    const { value, path, depth } = stack.pop()!;
    if (value === null || typeof value !== "object" || Buffer.isBuffer(value)) continue;
    if (depth > maxDepth) return { kind: "too_deep", field: path };
    // Object.keys lists an own `__proto__` key (JSON.parse creates one); `for...in` on the prototype chain is not wanted.
    for (const key of Object.keys(value)) {
      const field = path ? `${path}.${key.slice(0, 100)}` : key.slice(0, 100);
      if (FORBIDDEN_KEYS.has(key)) return { kind: "forbidden_key", field };
      stack.push({ value: (value as Record<string, unknown>)[key], path: field, depth: depth + 1 });
    }
  }
  return null;
}
