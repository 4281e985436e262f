/**
 * The countries a partner can choose in their profile: the ISO 3166-1 alpha-2 codes the API accepts
 * (shared/domain/countries.ts), each with its name in the page's language (English by default) from Intl.DisplayNames, sorted by name. The API takes and
 * answers the code (upper case).
 */
import { COUNTRY_CODES } from "../../../shared/domain/countries";

function namer(locale: string): (code: string) => string {
  try {
    const names = new Intl.DisplayNames([locale], { type: "region", fallback: "code" });
    return (code) => names.of(code) ?? code;
  } catch {
    return (code) => code;
  }
}

const lists = new Map<string, ReadonlyArray<readonly [code: string, name: string]>>();

/** Every country as [code, name] in `locale` (English by default), by name ("Åland Islands" among the A's). */
export function countries(locale = "en"): ReadonlyArray<readonly [code: string, name: string]> {
  let list = lists.get(locale);
  if (!list) {
    const name = namer(locale);
    list = COUNTRY_CODES.map((code) => [code, name(code)] as const).sort((a, b) => a[1].localeCompare(b[1], locale));
    lists.set(locale, list);
  }
  return list;
}
