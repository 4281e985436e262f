/**
 * What a click's own request says about where it came from (issue 49, click details): the referrer's domain, the ad
 * networks' click ids and the utm fields of the landing URL, whether that is paid traffic, and the client address as
 * a keyed hash that changes every UTC day (the address itself is never stored). Pure rules; the attribution service
 * records what they return with the click, and the fraud rules (fraud-rules.ts) read it.
 */
import { createHmac } from "node:crypto";

/** The query parameters ad networks add to a landing URL when their ad was clicked, by network. */
export const AD_CLICK_ID_PARAMS: Readonly<Record<string, string>> = Object.freeze({
  gclid: "google",
  gbraid: "google",
  wbraid: "google",
  dclid: "google",
  fbclid: "meta",
  msclkid: "microsoft",
  ttclid: "tiktok",
  twclid: "x",
  li_fat_id: "linkedin",
  epik: "pinterest",
  sccid: "snapchat",
  yclid: "yandex",
});

export const UTM_FIELDS = ["utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content"] as const;
export type UtmField = (typeof UTM_FIELDS)[number];

/** utm_medium values that mean an ad was paid for (any case). */
const PAID_MEDIUMS = new Set(["cpc", "ppc", "paid", "paidsearch", "paid_search", "paid-social", "paid_social", "paidsocial", "cpm", "display"]);

/** The longest utm value kept (a landing URL is the merchant's partner's to write). */
const MAX_UTM_LENGTH = 200;

export interface LandingDetails {
  /** The ad networks whose click ids the landing URL carries (google, meta, ...), sorted; empty for none. */
  adNetworks: string[];
  utm: Partial<Record<UtmField, string>>;
  /** An ad click id, or a utm_medium of paid traffic (cpc, ppc, paid, ...). */
  paid: boolean;
}

function parsedUrl(text: string | null | undefined): URL | null {
  if (!text) return null;
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:" ? url : null;
  } catch {
    return null;
  }
}

/** The landing URL's ad click ids, utm fields and whether it is paid traffic; nothing for a URL that is not http(s). */
export function landingDetails(landingUrl: string | null | undefined): LandingDetails {
  const url = parsedUrl(landingUrl);
  if (!url) return { adNetworks: [], utm: {}, paid: false };
  const networks = new Set<string>();
  for (const [param, network] of Object.entries(AD_CLICK_ID_PARAMS)) if (url.searchParams.get(param)) networks.add(network);
  const utm: Partial<Record<UtmField, string>> = {};
  for (const field of UTM_FIELDS) {
    const value = url.searchParams.get(field)?.trim();
    if (value) utm[field] = value.slice(0, MAX_UTM_LENGTH);
  }
  const paidMedium = utm.utm_medium !== undefined && PAID_MEDIUMS.has(utm.utm_medium.toLowerCase());
  return { adNetworks: [...networks].sort(), utm, paid: networks.size > 0 || paidMedium };
}

/** The referrer's host without `www.`, lower-case (`news.example.com`); null for none or one that is not http(s). */
export function referrerDomain(referrer: string | null | undefined): string | null {
  const url = parsedUrl(referrer);
  if (!url || !url.hostname) return null;
  return url.hostname
    .toLowerCase()
    .replace(/^www\./, "")
    .replace(/\.$/, "");
}

/**
 * Whether `domain` is `banned` or one of its subdomains (`spam.example` bans `a.spam.example`, not `notspam.example`).
 * Both are referrerDomain's form.
 */
export function domainMatches(domain: string, banned: string): boolean {
  const b = banned.toLowerCase().replace(/^www\./, "");
  return domain === b || domain.endsWith(`.${b}`);
}

/**
 * A client address as a keyed hash that is the same all of one UTC day and different the next: two clicks, leads or
 * sales of a day can be matched, never traced back (without the secret) nor matched across days. The key of the day is
 * HMAC(secret, day); the hash HMAC(key of the day, address), hex, first 32 characters (128 bits).
 */
export function dailyAddressHash(secret: string, address: string, at: Date): string {
  return createHmac("sha256", dayKeyOf(secret, at.toISOString().slice(0, 10)))
    .update(address.trim().toLowerCase())
    .digest("hex")
    .slice(0, 32);
}

/** The key of a day, computed once per secret and day (the click path hashes every click's address). */
let lastDayKey: { secret: string; day: string; key: Buffer } | null = null;
function dayKeyOf(secret: string, day: string): Buffer {
  if (lastDayKey?.secret !== secret || lastDayKey.day !== day) lastDayKey = { secret, day, key: createHmac("sha256", secret).update(`address-hash:${day}`).digest() };
  return lastDayKey.key;
}
