/**
 * The language of the partner pages (the portal and the application page; docs/partners.md, "Languages"): the
 * partner's setting once known, else the browser's first supported language (navigator.languages), else English.
 * `setLanguage` also sets <html lang> and the locale numbers and money are formatted in; a component re-renders
 * with the new texts when its page's root re-renders (the portal keeps the language in its state).
 */
import { chooseLocale, t as translate, type Locale, type MessageKey } from "../../../shared/i18n";
import { setFormatLocale } from "./format";

let current: Locale = "en";

const browserLanguages = (): string[] => (typeof navigator === "undefined" ? [] : [...(navigator.languages ?? []), navigator.language].filter(Boolean));

/** Chooses the language from the partner's setting (null: none) and the browser's; returns it. */
export function setLanguage(setting: Locale | null | undefined): Locale {
  current = chooseLocale(setting, browserLanguages());
  document.documentElement.lang = current;
  setFormatLocale(current);
  return current;
}

export const language = (): Locale => current;

/** The text of `key` in the current language, with its {placeholders} filled. */
export const t = (key: MessageKey, params?: Record<string, string | number>): string => translate(current, key, params);
