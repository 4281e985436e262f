/**
 * The countries a partner can choose in their profile: the ISO 3166-1 alpha-2 codes the API accepts
 * (shared/domain/countries.ts), each with its English name from Intl.DisplayNames, sorted by name. The API takes and
 * answers the code (upper case).
 */
import { COUNTRY_CODES } from "../../../shared/domain/countries";

function namer(): (code: string) => string {
  try {
    const names = new Intl.DisplayNames(["en"], { type: "region", fallback: "code" });
    return (code) => names.of(code) ?? code;
  } catch {
    return (code) => code;
  }
}

let list: ReadonlyArray<readonly [code: string, name: string]> | null = null;

/** Every country as [code, name], by name ("Åland Islands" among the A's). */
export function countries(): ReadonlyArray<readonly [code: string, name: string]> {
  if (!list) {
    const name = namer();
    list = COUNTRY_CODES.map((code) => [code, name(code)] as const).sort((a, b) => a[1].localeCompare(b[1], "en"));
  }
  return list;
}
