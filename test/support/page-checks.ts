/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * Checks the browser tests run on every dashboard page: readable contrast
 * (WCAG AA), no horizontal overflow at a phone's width, every form field
 * labelled, every control reachable by keyboard with a visible focus ring,
 * and screenshots saved under test/browser/screenshots/ (git-ignored).
 */
import fs from "node:fs";
import path from "node:path";
import type { Locator, Page } from "playwright-core";

export const SCREENSHOT_DIR = path.join(__dirname, "..", "browser", "screenshots");

/** The widths the pages must work at: a laptop and a phone. */
export const WIDTHS = { desktop: { width: 1366, height: 900 }, phone: { width: 390, height: 844 } } as const;

/** Saves a full-page screenshot as screenshots/<name>-<width>.png and returns its path. */
export async function saveScreenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name}-${page.viewportSize()?.width ?? "auto"}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

export interface ContrastFailure {
  text: string;
  ratio: number;
  required: number;
  color: string;
  background: string;
}

/**
 * Every visible text node's contrast against the background it is drawn on
 * (the nearest ancestor with an opaque background colour): 4.5:1, or 3:1 for
 * large text (24 px, or 18.66 px bold). Disabled controls are exempt, as WCAG
 * says. Text over an image or gradient is not judged (none on our pages).
 */
export async function contrastFailures(page: Page): Promise<ContrastFailure[]> {
  return page.evaluate(() => {
    const parse = (c: string): number[] => (c.match(/[\d.]+/g) ?? []).map(Number);
    const luminance = ([r, g, b]: number[]) => {
      const f = (v: number) => {
        const s = v / 255;
        return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
      };
      return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
    };
    const backgroundOf = (el: Element | null): string => {
      for (let e = el; e; e = e.parentElement) {
        const bg = getComputedStyle(e).backgroundColor;
        const rgba = parse(bg);
        if (rgba.length >= 3 && (rgba.length < 4 || rgba[3] > 0.5)) return bg;
      }
      return "rgb(255, 255, 255)";
    };
    const failures: Array<{ text: string; ratio: number; required: number; color: string; background: string }> = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    const seen = new Set<Element>();
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const el = node.parentElement;
      if (!el || seen.has(el) || !(node.textContent ?? "").trim()) continue;
      seen.add(el);
      const style = getComputedStyle(el);
      const rect = el.getBoundingClientRect();
      if (style.visibility === "hidden" || style.display === "none" || rect.width <= 1 || rect.height <= 1 || Number(style.opacity) === 0) continue;
      if (el.closest("[disabled], [aria-disabled='true'], .uplot")) continue;
      const fg = parse(style.color);
      const background = backgroundOf(el);
      const l1 = luminance(fg);
      const l2 = luminance(parse(background));
      const ratio = (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
      const size = parseFloat(style.fontSize);
      const bold = Number(style.fontWeight) >= 700;
      const required = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
      if (ratio < required) failures.push({ text: (node.textContent ?? "").trim().slice(0, 60), ratio: Math.round(ratio * 100) / 100, required, color: style.color, background });
    }
    return failures;
  });
}

/** True when the page is wider than the window (a phone would scroll sideways); scrolling tables inside a wrapper are fine. */
export async function overflowsHorizontally(page: Page): Promise<boolean> {
  return page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth + 1);
}

/** Form fields without an accessible name (no label, aria-label or aria-labelledby). */
export async function unlabelledFields(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll("input:not([type=hidden]), select, textarea")]
      .filter((el) => {
        const field = el as HTMLInputElement;
        if (field.offsetParent === null) return false;
        if (field.getAttribute("aria-label") || field.getAttribute("aria-labelledby")) return false;
        return !(field.labels && field.labels.length > 0);
      })
      .map((el) => el.outerHTML.slice(0, 80)),
  );
}

/**
 * Presses Tab until `target` has the focus (at most `maxTabs` times) and
 * checks that the focused control shows a focus ring; throws otherwise. Use
 * it instead of clicking, to prove a control is keyboard-usable.
 */
export async function tabTo(page: Page, target: Locator, maxTabs = 150): Promise<void> {
  const handle = await target.elementHandle();
  if (!handle) throw new Error("tabTo: the target is not on the page");
  for (let i = 0; i < maxTabs; i++) {
    await page.keyboard.press("Tab");
    if (await handle.evaluate((el) => el === document.activeElement)) {
      const ring = await handle.evaluate((el) => {
        const s = getComputedStyle(el);
        return (s.outlineStyle !== "none" && parseFloat(s.outlineWidth) > 0) || s.boxShadow !== "none";
      });
      if (!ring) throw new Error("tabTo: the focused control shows no focus ring");
      return;
    }
  }
  throw new Error(`tabTo: not reached after ${maxTabs} presses of Tab`);
}

/** All the checks at the page's current width; the test asserts the returned list is empty. */
export async function pageProblems(page: Page): Promise<string[]> {
  const problems: string[] = [];
  for (const f of await contrastFailures(page)) problems.push(`contrast ${f.ratio} < ${f.required} for "${f.text}" (${f.color} on ${f.background})`);
  if (await overflowsHorizontally(page)) problems.push(`the page is wider than ${page.viewportSize()?.width} px`);
  for (const f of await unlabelledFields(page)) problems.push(`unlabelled field ${f}`);
  return problems;
}

/** Errors of the page as they happen: script errors, console errors and failed requests (the first "who am I" before signing in excepted). */
export function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => (m.type() === "error" && !m.text().startsWith("Failed to load resource") ? errors.push(m.text()) : undefined));
  page.on("response", (r) => (r.status() >= 400 && !r.url().endsWith("/api/auth/me") ? errors.push(`${r.status()} ${r.url()}`) : undefined));
  return errors;
}

/** Waits until `locator`'s first match contains `text` (15 s at most), then returns. */
export async function expectText(locator: Locator, text: string, timeoutMs = 15_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  const seen = async () =>
    (await locator
      .first()
      .textContent({ timeout: 1_000 })
      .catch(() => "")) ?? "";
  while (!(await seen()).includes(text)) {
    if (Date.now() > until) throw new Error(`Expected "${text}", saw "${await seen()}"`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Opens `url` of the console and signs in with the form, as a person would. */
export async function signInAt(page: Page, url: string, user: { email: string; password: string }): Promise<void> {
  await page.goto(url);
  await page.getByLabel("Email").fill(user.email);
  await page.getByLabel("Password").fill(user.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByText("Signed in as").waitFor();
}

/** The page's checks and a screenshot (screenshots/<name>-<width>.png) at the laptop's width, then at the phone's. */
export async function checkAtBothWidths(page: Page, name: string, ready: () => Promise<unknown>): Promise<void> {
  for (const width of [WIDTHS.desktop, WIDTHS.phone]) {
    await page.setViewportSize(width);
    await ready();
    expect(await pageProblems(page)).toEqual([]);
    await saveScreenshot(page, name);
  }
  await page.setViewportSize(WIDTHS.desktop);
}

/** Presses the page's Refresh button until `target` is on the page (20 s at most). */
export async function refreshUntil(page: Page, target: Locator, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while ((await target.count()) === 0) {
    if (Date.now() > until) throw new Error("Not shown after refreshing");
    await page.getByRole("button", { name: "Refresh" }).click();
    await page.waitForTimeout(300);
  }
}

/** Waits until the focused element's text is `text` (5 s at most): screens move the focus after they render. */
export async function expectFocusOn(page: Page, text: string, timeoutMs = 5_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  const focused = () => page.evaluate(() => document.activeElement?.textContent ?? null);
  while ((await focused()) !== text) {
    if (Date.now() > until) throw new Error(`Expected the focus on "${text}", it is on "${await focused()}"`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
