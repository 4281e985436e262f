/** The brand colour on the embedded referrals page (shared/domain/brand-color.ts): always readable, kept when it is. */
import fc from "fast-check";
import { contrastRatio, readableBrandColor } from "../../shared/domain/brand-color";

const hexColor = fc.integer({ min: 0, max: 0xffffff }).map((n) => `#${n.toString(16).padStart(6, "0")}`);

test("WCAG's contrast ratios: black on white 21, white on white 1, the console's own accent 6.4", () => {
  expect(contrastRatio("#000000", "#ffffff")).toBeCloseTo(21, 5);
  expect(contrastRatio("#ffffff", "#ffffff")).toBe(1);
  expect(contrastRatio("#0b57d0", "#ffffff")).toBeCloseTo(6.39, 1);
});

test("any brand colour comes out with white at 4.5:1 or more, and a readable one unchanged", () => {
  fc.assert(
    fc.property(hexColor, (color) => {
      const readable = readableBrandColor(color);
      expect(contrastRatio(readable, "#ffffff")).toBeGreaterThanOrEqual(4.5);
      if (contrastRatio(color, "#ffffff") >= 4.5) expect(readable).toBe(color);
    }),
  );
  // A light yellow becomes a dark one, of the same hue.
  expect(readableBrandColor("#ffd400")).toMatch(/^#[0-9a-f]{6}$/);
  expect(readableBrandColor("#6d28d9")).toBe("#6d28d9");
});
