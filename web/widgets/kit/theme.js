// Light or dark for a widget: its `theme` attribute, else the host page's toggle or color-scheme, else the OS;
// connected widgets are re-themed when any of those change.

/** The theme attribute's values; `auto` (or none) follows the host page, then the OS. */
export const THEMES = ['light', 'dark', 'auto'];

/** A page-wide light/dark toggle on <html> or <body>: VitePress/Tailwind `.dark`, Docusaurus/Bootstrap/Pico `data-theme`/`data-bs-theme`, Material `data-md-color-scheme`. */
function pageToggle(el) {
  if (!el) return null;
  if (el.classList.contains('dark')) return 'dark';
  for (const name of ['data-theme', 'data-bs-theme']) {
    const value = el.getAttribute(name)?.trim().toLowerCase();
    if (value === 'dark' || value === 'light') return value;
  }
  const md = el.getAttribute('data-md-color-scheme')?.trim().toLowerCase();
  if (md === 'slate') return 'dark';
  if (md === 'default') return 'light';
  return null;
}

/**
 * 'light' or 'dark' for `element`: its `theme` attribute, else the host page's toggle (pageToggle), else the
 * `color-scheme` its parent inherits from the host when that names one scheme, else the OS setting.
 */
export function hostTheme(element) {
  const own = element.getAttribute('theme')?.trim().toLowerCase();
  if (own === 'light' || own === 'dark') return own;
  const toggle = pageToggle(document.documentElement) ?? pageToggle(document.body);
  if (toggle) return toggle;
  const parent = element.parentElement ?? element.getRootNode()?.host ?? document.documentElement;
  const words = new Set(inheritedColorScheme(parent).split(/\s+/));
  if (words.has('dark') !== words.has('light')) return words.has('dark') ? 'dark' : 'light';
  return globalThis.matchMedia?.('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

/**
 * The color-scheme `element` inherits, read from the top of the document down, stopping at the first ancestor whose
 * content-visibility may skip its contents: a computed style inside a skipped subtree styles that whole subtree
 * (13-110 ms per chapter of index.html under Lighthouse's 4x slowdown), while the ancestors above it are styled
 * already. A color-scheme set inside such a container is not seen.
 */
function inheritedColorScheme(element) {
  const path = [];
  for (let node = element; node; node = node.parentElement ?? node.getRootNode?.()?.host ?? null) path.unshift(node);
  let scheme = 'normal';
  for (const node of path) {
    const style = getComputedStyle(node);
    scheme = style.colorScheme;
    if (style.contentVisibility !== 'visible') break;
  }
  return scheme;
}

/** Connected widgets, re-themed when the host page flips its toggle or the OS changes its setting. */
export const themedWidgets = new Set();
let themeWatcher = null;

/** Starts (once) the observer that re-themes every connected widget. */
export function watchHostTheme() {
  if (themeWatcher) return;
  const refresh = () => themeTogether([...themedWidgets]);
  themeWatcher = new MutationObserver(refresh);
  const attributeFilter = ['class', 'style', 'data-theme', 'data-bs-theme', 'data-md-color-scheme'];
  themeWatcher.observe(document.documentElement, { attributes: true, attributeFilter });
  if (document.body) themeWatcher.observe(document.body, { attributes: true, attributeFilter });
  globalThis.matchMedia?.('(prefers-color-scheme: dark)').addEventListener?.('change', refresh);
}

/** Themes `widgets`, every read before any write, so that the page's style is recalculated once, not per widget. */
function themeTogether(widgets) {
  const themes = widgets.map((w) => hostTheme(w));
  widgets.forEach((w, i) => w.applyTheme(themes[i]));
}

/** Widgets connected in this task, themed together in a microtask (applyThemeSoon). */
const themeQueue = new Set();

/**
 * Themes `widget` in a microtask, with every widget connected in the same task (themeTogether): a hostTheme read
 * after another widget's DOM writes forces a style recalculation, so reading between writes costs one per widget.
 */
export function applyThemeSoon(widget) {
  if (!themeQueue.size)
    queueMicrotask(() => {
      const widgets = [...themeQueue].filter((w) => w.isConnected);
      themeQueue.clear();
      themeTogether(widgets);
    });
  themeQueue.add(widget);
}
