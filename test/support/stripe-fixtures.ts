/**
 * Processor objects built from Stripe's published fixtures (test/fixtures/stripe),
 * with only the fields a scenario needs overlaid.
 */
import current from "../fixtures/stripe/current.json";
import legacy from "../fixtures/stripe/legacy.json";

export type Layout = "current" | "legacy";
type Json = Record<string, unknown>;

const FIXTURES: Record<Layout, { resources: Record<string, Json> }> = { current, legacy } as never;
/** The API version each layout stands for, as events carry it. */
export const API_VERSION: Record<Layout, string> = { current: "2026-10-28.endive", legacy: "2025-02-24.acacia" };

const isPlainObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** Objects merge key by key; anything else (arrays, null, scalars) replaces. */
function overlay(base: Json, over: Json): Json {
  const out: Json = { ...base };
  for (const [key, value] of Object.entries(over)) {
    out[key] = isPlainObject(value) && isPlainObject(base[key]) ? overlay(base[key] as Json, value) : value;
  }
  return out;
}

export function stripeObject<T extends Json>(layout: Layout, resource: string, over: T): Json & T {
  const base = FIXTURES[layout].resources[resource];
  if (!base) throw new Error(`No ${resource} in the ${layout} fixtures`);
  return overlay(structuredClone(base), over) as Json & T;
}
