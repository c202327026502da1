// Layout at phone, tablet and desktop widths, measured in Chromium: no display equation, widget label or
// chart is cut off, scrolls inside its box, shrinks below 11 px, overprints another label, or breaks a word
// in the middle (tests/browser/layout-audit.mjs lists the checks). Screenshots of the whole page at 375
// and 1280 px are saved for review.
import test from 'node:test';
import assert from 'node:assert/strict';
import { startSite, screenshot } from './harness.mjs';
import { errors } from './page-helpers.mjs';
import { auditAt, WIDTHS } from './layout-run.mjs';

for (const width of WIDTHS) {
  test(`at ${width} px nothing is clipped, scrolled inside its box, smaller than 11 px, overprinted or broken mid-word`, async (t) => {
    const site = await startSite();
    t.after(() => site.close());
    const { page, findings } = await auditAt(site, width);
    for (const finding of findings) t.diagnostic(finding);
    assert.deepEqual(findings, []);
    assert.deepEqual(errors(page), []);
  });
}

test('from 320 px up display equations fit the column (every one typeset, none scrolls, long ones scaled) and widget chart text is 11 px or more', async (t) => {
  const site = await startSite();
  t.after(() => site.close());
  for (const width of [320, 414]) {
    const { page, findings } = await auditAt(site, width);
    assert.deepEqual(
      findings.filter((f) => f.startsWith('equation') || f.startsWith('page')),
      [],
      `${width} px`,
    );
    // Every widget's chart draws at its shown width down to 280 px, so none scales its labels below 11 px (the
    // chapters' static figures, svg.fig-svg, scale with the column and are held to 11 px from 375 px up).
    assert.deepEqual(
      findings.filter((f) => /^small: .* text "/.test(f) && !f.startsWith('small: svg.fig-svg')),
      [],
      `${width} px: widget chart text below 11 px`,
    );
    const equations = await page.$$eval('.katex-display', (els) =>
      els.map((e) => ({ scale: parseFloat(e.style.fontSize || '1'), fits: e.scrollWidth <= e.clientWidth + 1 })),
    );
    assert.equal(
      equations.length,
      22,
      'twenty-two display equations (chapter 8a adds two, 8c two for attention and ring steps, 8d one, chapter 9 two for MLA and windows and one for speculative decoding)',
    );
    assert.ok(
      equations.every((e) => e.fits),
      `${width} px: all fit`,
    );
    // Scaled, but still readable: the multi-line forms keep every equation at 60 % or more of full size.
    assert.ok(
      equations.every((e) => e.scale >= 0.6),
      `${width} px: scales ${equations.map((e) => e.scale).join(', ')}`,
    );
    if (width === 320)
      assert.ok(
        equations.some((e) => e.scale < 1),
        'at 320 px some equations are scaled to fit',
      );
  }
  const { page: phone } = await auditAt(site, 375);
  await phone.locator('section#flops .katex-display').nth(1).scrollIntoViewIfNeeded();
  await screenshot(phone, 'page-phone-flops');
});
