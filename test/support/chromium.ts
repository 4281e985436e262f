/** Debian's Chromium for the browser tests, which skip themselves (loudly) without it. */
import fs from "node:fs";
import { chromium, type Browser } from "playwright-core";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const available = fs.existsSync(CHROMIUM);
if (!available) console.warn(`Browser test SKIPPED: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH).`);

/** `describe` when Chromium is installed, `describe.skip` otherwise. */
export const describeWithChromium = available ? describe : describe.skip;

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync"],
  });
}

/**
 * For a browser suite: starts `start()` (the system, or a fixture around it) and Chromium before its tests and
 * stops both after them. Read `fixture` and `browser` inside a test.
 */
export function useChromiumWith<T extends { stop(): Promise<void> }>(start: () => Promise<T>): { readonly fixture: T; readonly browser: Browser } {
  let fixture: T | undefined;
  let browser: Browser | undefined;
  beforeAll(async () => {
    fixture = await start();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await fixture?.stop();
  });
  return {
    get fixture() {
      if (!fixture) throw new Error("the suite's fixture is not started (read it inside a test)");
      return fixture;
    },
    get browser() {
      if (!browser) throw new Error("Chromium is not launched (read it inside a test)");
      return browser;
    },
  };
}
