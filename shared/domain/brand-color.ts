/**
 * A merchant's brand colour on the pages partners see (the embedded referrals page): used for links and for buttons
 * with white text, so it must reach WCAG AA's 4.5:1 against white. A colour too light is darkened (each channel
 * scaled down by the same step, keeping its hue) until it does; one dark enough is kept as it is.
 */

/** WCAG 2 relative luminance of `#rrggbb`. */
export function relativeLuminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** WCAG 2 contrast ratio of two `#rrggbb` colours (1 to 21). */
export function contrastRatio(a: string, b: string): number {
  const [hi, lo] = [relativeLuminance(a), relativeLuminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

const AA = 4.5;

/** The brand colour itself when white reaches 4.5:1 on it, else the first darker step of it that does. */
export function readableBrandColor(hex: string): string {
  const channels = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
  for (let scale = 1; scale > 0; scale -= 0.02) {
    const color = `#${channels
      .map((c) =>
        Math.floor(c * scale)
          .toString(16)
          .padStart(2, "0"),
      )
      .join("")}`;
    if (contrastRatio(color, "#ffffff") >= AA) return color;
  }
  return "#000000";
}
