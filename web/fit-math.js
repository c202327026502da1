// Fits each display equation to its column: the math is typeset at build time (KaTeX), so only its size
// is adjusted here. An equation wider than the column is scaled down (font-size in em, so it stays sharp)
// instead of hiding its right end behind a scrollbar. Long equations are also written as several aligned
// lines in content/chapters, so the scale stays readable at 320 px. Without this script the equations
// scroll sideways (web/style.css), which is the fallback.
const SELECTOR = '.katex-display';

export function fitAll(root = document, { renderedOnly = false } = {}) {
  // Reset all, then measure all, then scale: one layout for the whole page instead of one per equation.
  let displays = [...root.querySelectorAll(SELECTOR)];
  // Measuring an equation in a chapter the browser skips (content-visibility) would lay that chapter out:
  // those are fitted when their chapter appears (below).
  if (renderedOnly)
    displays = displays.filter((display) => display.checkVisibility?.({ contentVisibilityAuto: true }) ?? true);
  for (const display of displays) display.style.fontSize = '';
  const sizes = displays.map((display) => [display.scrollWidth, display.clientWidth]);
  displays.forEach((display, i) => {
    const [natural, room] = sizes[i];
    if (natural > room + 0.5 && room > 0) display.style.fontSize = `${Math.floor((room / natural) * 100) / 100}em`;
  });
  document.documentElement.dataset.mathFitted = String(window.innerWidth);
}

if (typeof document !== 'undefined' && document.querySelector(SELECTOR)) {
  let lastWidth = -1;
  const refitNow = () => {
    const width = document.querySelector('main')?.clientWidth ?? window.innerWidth;
    if (width === lastWidth) return;
    lastWidth = width;
    fitAll(document, { renderedOnly: true });
  };
  // In an idle period, so fitting never delays the first screen; until then a wide equation scrolls sideways
  // (the fallback).
  const refit = () =>
    typeof requestIdleCallback === 'function' ? requestIdleCallback(refitNow, { timeout: 1000 }) : refitNow();
  // KaTeX's web fonts change the widths: fit again once they have loaded.
  const refitAll = () => {
    lastWidth = -1;
    refit();
  };
  document.fonts?.ready.then(refitAll);
  document.fonts?.addEventListener?.('loadingdone', refitAll);
  // A chapter laid out for the first time (web/style.css: content-visibility) is fitted at once, before the
  // reader sees it; a web font it loads only then refits it through loadingdone.
  document.addEventListener(
    'contentvisibilityautostatechange',
    (event) => {
      if (!event.skipped && event.target instanceof Element) fitAll(event.target, { renderedOnly: true });
    },
    true,
  );
  // The observer also reports once right after the first layout: fitting then reads a layout the browser
  // has already done, instead of forcing one while the widgets are still starting.
  if (typeof ResizeObserver === 'function')
    new ResizeObserver(refit).observe(document.querySelector('main') ?? document.body);
  else requestAnimationFrame(refit);
}
