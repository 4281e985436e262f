/**
 * Action results cross the bus as JSON. Converting dates to ISO strings at
 * the owner keeps results identical whether the caller is local or remote.
 */
export type Jsonified<T> = T extends Date ? string : T extends Array<infer U> ? Jsonified<U>[] : T extends object ? { [K in keyof T]: Jsonified<T[K]> } : T;

export function toDto<T>(value: T): Jsonified<T> {
  if (value instanceof Date) return value.toISOString() as Jsonified<T>;
  if (Array.isArray(value)) return value.map(toDto) as Jsonified<T>;
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = toDto(v);
    return out as Jsonified<T>;
  }
  return value as Jsonified<T>;
}
