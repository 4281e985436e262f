/**
 * The key of the daily address hashes (shared/domain/traffic.ts dailyAddressHash) every service uses, so a click's
 * address and a partner's portal visit of the same day hash alike: ADDRESS_HASH_SECRET, else one derived from the
 * operator token (ADMIN_TOKEN, or the one generated in DATA_DIR on first start: shared/admin-token.ts), so an install
 * keeps one without a setting. Processes of a split deployment share it through ADMIN_TOKEN; set ADDRESS_HASH_SECRET
 * where they do not. Changing it only changes the hashes from then on (they are per day anyway).
 */
import { createHmac } from "node:crypto";
import { loadAdminToken } from "./admin-token";
import { dailyAddressHash } from "./domain/traffic";

export function addressHashSecret(): string {
  if (process.env.ADDRESS_HASH_SECRET) return process.env.ADDRESS_HASH_SECRET;
  return createHmac("sha256", loadAdminToken().token).update("click address hash").digest("hex");
}

/**
 * The address hashed and looked up: client-address.ts reduces an IPv6 address to its /64 network
 * ("2001:db8:1:2::/64"), whose first address stands for it (the same country, the same hosting network).
 */
export const hashableAddress = (address: string): string => address.replace(/\/64$/, "");

/** The address's hash of `at`'s UTC day, with the deployment's key. */
export const addressHashOf = (address: string, at: Date): string => dailyAddressHash(addressHashSecret(), hashableAddress(address), at);
