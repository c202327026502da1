// Opens the whole page at a width, waits for every widget and inline value, opens every <details>, and
// returns the layout audit's findings (tests/browser/layout-audit.mjs).
import { layoutAudit } from './layout-audit.mjs';
import { watch, mountAll } from './page-helpers.mjs';

export const WIDTHS = [375, 768, 1280];

export async function auditAt(site, width, height = 900) {
  const page = watch(await site.newPage({ width, height }));
  await page.goto(site.url);
  await page.waitForFunction(() => document.documentElement.dataset.ready === 'true', null, { timeout: 20000 });
  await mountAll(page);
  await page.evaluate(() => document.fonts.ready);
  await page.waitForFunction((w) => document.documentElement.dataset.mathFitted === String(w), width);
  await page.waitForFunction(
    () =>
      [...document.querySelectorAll('tally-value')].every((v) => v.dataset.state !== 'loading') &&
      document.querySelector('tally-recipes')?.dataset.state === 'ok' &&
      [...document.querySelectorAll('tally-float, tally-roofline')].every((w) => w.shadowRoot?.querySelector('svg')),
    null,
    { timeout: 20000 },
  );
  // Every chapter laid out, as when the reader has scrolled to it (off-screen chapters skip layout, web/style.css),
  // with its fonts loaded and its equations fitted (web/fit-math.js refits when a chapter appears).
  await page.addStyleTag({ content: 'section.chapter { content-visibility: visible !important; }' });
  await page.evaluate(async () => {
    await document.fonts.ready;
    (await import('/fit-math.js')).fitAll();
  });
  await page.evaluate(() => {
    for (const root of [
      document,
      ...[...document.querySelectorAll('*')].filter((e) => e.shadowRoot).map((e) => e.shadowRoot),
    ])
      for (const d of root.querySelectorAll('details')) d.open = true;
  });
  // Let ResizeObservers redraw the charts at their real width.
  await page.evaluate(
    () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(resolve, 100)))),
  );
  const findings = await page.evaluate(layoutAudit, { minFontPx: 11 });
  return { page, findings };
}
