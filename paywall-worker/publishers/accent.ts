// A publisher's accent colour on the buyer page, kept readable: text on the accent (the Pay button) is black or
// white, whichever contrasts more, and accent-coloured text on the white page (the other buttons) falls back to the
// page's ink when the accent is too light for it (WCAG 2's 4.5:1 for text).
const WHITE = '#ffffff';
const BLACK = '#000000';
/** The page's own ink (site/x402-buyer/buyer.css --ink). */
const INK = '#1b1f24';
export const MIN_TEXT_CONTRAST = 4.5;

/** WCAG 2 relative luminance of a `#rrggbb` colour. */
function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** WCAG 2 contrast ratio of two `#rrggbb` colours (1 to 21). */
export function contrast(a: string, b: string): number {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (light + 0.05) / (dark + 0.05);
}

/** The page's colour variables for an accent: `ink` on the accent, `text` in the accent's place on white. */
export function accentColors(accent: string): { accent: string; ink: string; text: string } {
  return {
    accent,
    ink: contrast(accent, WHITE) >= contrast(accent, BLACK) ? WHITE : BLACK,
    text: contrast(accent, WHITE) >= MIN_TEXT_CONTRAST ? accent : INK,
  };
}
