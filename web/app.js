// Page glue for index.html: when the page is ready, and a notice for URL parameters no widget on the page
// claimed. Widgets work without this file (see embed-example.html); each widget brings its own Share / embed
// control (web/widgets/kit/share.js).
import { unclaimedParams } from './state.js';

// Every widget the page waits on before it reports ready.
const WIRED = [
  'tally-memory-budget',
  'tally-compute',
  'tally-float',
  'tally-roofline',
  'tally-inference',
  'tally-step',
  'tally-collectives',
];

function showPageNotice(message) {
  const box = document.getElementById('page-notice');
  if (!box) return;
  box.textContent = message; // textContent only: URL text never becomes markup
  box.hidden = false;
}

/**
 * Resolves once the first contentful paint has been presented (the paint timing entry), not merely produced: on a
 * loaded phone a frame's callbacks run well before its pixels show, and downloads started then delay them.
 */
function firstPaint() {
  return new Promise((resolve) => {
    if (!globalThis.PerformanceObserver?.supportedEntryTypes?.includes('paint'))
      return requestAnimationFrame(() => setTimeout(resolve));
    new PerformanceObserver((list, observer) => {
      if (!list.getEntriesByName('first-contentful-paint').length) return;
      observer.disconnect();
      resolve();
    }).observe({ type: 'paint', buffered: true });
  });
}

async function main() {
  // The widgets upgrade after the first paint, so the prerendered text paints before any widget code runs.
  await firstPaint();
  // Then the modules the widgets need download in parallel (the list is build-site's), none before the first paint.
  for (const href of document.querySelector('meta[name="tally-module-graph"]')?.content.split(' ') ?? []) {
    const link = document.createElement('link');
    link.rel = 'modulepreload';
    link.href = href;
    document.head.append(link);
  }
  await import('./tally-widgets.js');
  // tally-widgets.js has defined every widget this site ships; a placeholder whose widget is not built yet stays
  // inert and is not waited for.
  const widgets = [...document.querySelectorAll(WIRED.join(','))].filter((w) => customElements.get(w.localName));
  // A shared link whose URL carries widget state mounts every widget now: each applies its part of the link, and
  // a parameter no widget claims can be told apart from one whose widget has not mounted yet.
  const linkState = unclaimedParams().length > 0;
  if (linkState) (await import('./widgets/kit/mount.js')).mountAll();
  // Ready: the widgets near the viewport at load are wired (the others mount as they come near it,
  // web/widgets/kit/mount.js); a page whose first screen holds no widget is ready once this module has run.
  const nearAtLoad = await Promise.all(widgets.map((w) => w.firstScreen ?? true));
  await Promise.all(widgets.filter((_, i) => linkState || nearAtLoad[i]).map((w) => w.ready ?? null));
  document.documentElement.dataset.firstScreenReadyMs = String(Math.round(performance.now()));
  document.documentElement.dataset.firstScreenWidgets = String(nearAtLoad.filter(Boolean).length);
  const stray = unclaimedParams();
  if (stray.length)
    showPageNotice(
      `Ignored URL parameters that match no figure on this page: ${stray.slice(0, 5).join(', ')}${stray.length > 5 ? ', …' : ''}.`,
    );
  // Time to interactive: every widget the reader can reach has its controls wired to the engine.
  document.documentElement.dataset.readyMs = String(Math.round(performance.now()));
  document.documentElement.dataset.ready = 'true';
}

main();
