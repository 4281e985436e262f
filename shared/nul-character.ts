/**
 * PostgreSQL refuses the NUL character (U+0000) in text, so a request
 * carrying one could only fail deep inside a write. The gateway looks for it
 * in every string (values and keys) of a parsed body or query and refuses the
 * request up front, naming where it was.
 *
 * Returns null when there is none, else where it is: `field` is the dotted
 * path of the value (or of the object whose key holds it), empty at the top.
 * Iterative, so a deeply nested body cannot overflow the stack.
 */
export function findNulCharacter(input: unknown): { field: string; inKey: boolean } | null {
  const stack: Array<{ value: unknown; path: string }> = [{ value: input, path: "" }];
  while (stack.length) {
    const { value, path } = stack.pop()!;
    if (typeof value === "string") {
      if (value.includes("\u0000")) return { field: path, inKey: false };
      continue;
    }
    if (value === null || typeof value !== "object" || Buffer.isBuffer(value)) continue;
    for (const [key, child] of Object.entries(value)) {
      if (key.includes("\u0000")) return { field: path, inKey: true };
      stack.push({ value: child, path: path ? `${path}.${key.slice(0, 100)}` : key.slice(0, 100) });
    }
  }
  return null;
}
