// Records each chapter's rendered height, which the page uses as its placeholder size while the chapter is
// off-screen (web/style.css: `content-visibility: auto` on section.chapter skips laying out chapters the reader
// cannot see; `contain-intrinsic-size` holds their place). A placeholder the size of the real chapter keeps the
// scrollbar and in-page links where they will be once the chapter renders. Rerun after editing a chapter:
//   node scripts/upkeep/measure-chapter-heights.mjs [--site build/site]   -> content/chapter-heights.json
// Measured in headless Chromium at 1280 px (every width from 708 px up lays the 42rem column out the same) and
// at 375 px (phones, the style.css layout below 600 px) and 320 px (the narrowest phones), with every widget
// wired and the fonts loaded.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium } from '../dev/chromium.mjs';
import { startServer } from '../dev/static-server.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const argv = process.argv.slice(2);
const siteDir = path.resolve(root, argv.includes('--site') ? argv[argv.indexOf('--site') + 1] : 'build/site');
const WIDTHS = { wide: 1280, narrow: 375, smallest: 320 };

const server = await startServer(siteDir, 0);
const browser = await launchChromium();
const heights = {};
for (const [name, width] of Object.entries(WIDTHS)) {
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  // Every chapter rendered, so each measures its real height rather than its placeholder.
  await page.addInitScript(() =>
    document.addEventListener('DOMContentLoaded', () => {
      const style = document.createElement('style');
      style.textContent = 'section.chapter { content-visibility: visible !important; }';
      document.head.append(style);
    }),
  );
  await page.goto(server.url);
  await page.waitForFunction(() => document.documentElement.dataset.ready === 'true', null, { timeout: 60000 });
  // Widgets off screen mount as they come near the viewport (web/widgets/kit/mount.js): every one is measured mounted.
  await page.evaluate(async () => {
    (await import(new URL('widgets/kit/mount.js', document.baseURI).href)).mountAll();
    await Promise.all(
      [...document.querySelectorAll('*')].filter((el) => el.localName.startsWith('tally-')).map((w) => w.ready),
    );
  });
  await page.evaluate(() => document.fonts.ready);
  await page.waitForFunction((w) => document.documentElement.dataset.mathFitted === String(w), width);
  await page.evaluate(
    () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(resolve, 200)))),
  );
  // The content box: contain-intrinsic-size sizes the content, and the section's own padding comes on top.
  const sections = await page.$$eval('section.chapter', (els) =>
    els.map((e) => {
      const style = getComputedStyle(e);
      return [e.id, Math.round(e.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom))];
    }),
  );
  for (const [id, height] of sections) (heights[id] ??= {})[name] = height;
  await page.close();
}
await browser.close();
await server.close();
const file = path.join(root, 'content/chapter-heights.json');
writeFileSync(
  file,
  JSON.stringify(
    {
      note: 'written by scripts/upkeep/measure-chapter-heights.mjs: content-box height in CSS px of each chapter rendered at 1280 px (wide), 375 px (narrow) and 320 px (smallest)',
      heights,
    },
    null,
    2,
  ) + '\n',
);
console.log(`measure-chapter-heights: ${Object.keys(heights).length} chapters -> ${path.relative(root, file)}`);
for (const [id, h] of Object.entries(heights))
  console.log(`  ${id.padEnd(16)} ${String(h.wide).padStart(6)} px wide, ${String(h.narrow).padStart(6)} px narrow`);
