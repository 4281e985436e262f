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
