/**
 * The language of the partner pages (the portal and the application page; docs/partners.md, "Languages"): the
 * partner's setting once known, else the browser's first supported language (navigator.languages), else English.
 * `setLanguage` also sets <html lang> and the locale numbers and money are formatted in; a component re-renders
 * with the new texts when its page's root re-renders (the portal keeps the language in its state).
 */
import type { ComponentChildren } from "preact";
import { chooseLocale, CATALOGUES, fill, t as translate, type Locale, type MessageKey } from "../../../shared/i18n";
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

/**
 * The text of `key` with some placeholders replaced by elements (`{email}` by <strong>…</strong>, say) and the others
 * by `params`: for a sentence with markup inside, whose word order differs between languages.
 */
export function tWith(key: MessageKey, nodes: Record<string, ComponentChildren>, params?: Record<string, string | number>): ComponentChildren[] {
  return CATALOGUES[current][key].split(/(\{\w+\})/).map((part) => {
    const name = /^\{(\w+)\}$/.exec(part)?.[1];
    return name !== undefined && name in nodes ? nodes[name] : fill(part, params);
  });
}
