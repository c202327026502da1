// Helpers shared by the page, widget, embed and fuzz browser tests (the harness itself is harness.mjs).
/** The native CLI's answer for the same method and arguments (the `result` of the envelope). */
export { native } from '../node/engine.mjs';

/** Files a page may look for and do without (the roofline widget's optional GPU measurements). */
const OPTIONAL_FILES = new Set(['/gpu-report.json']);

/** Records the paths that answered 404, so errors() can tell an optional file from a broken link. */
export function watch(page) {
  if (page.missing) return page;
  page.missing = [];
  page.on('response', (r) => {
    if (r.status() === 404) page.missing.push(new URL(r.url()).pathname);
  });
  return page;
}

/** The page's console errors and exceptions, less the 404s of optional files. */
export function errors(page) {
  const optional404s = (page.missing ?? []).filter((p) => OPTIONAL_FILES.has(p)).length;
  let skip = optional404s;
  return page.errors.filter((e) => !(skip > 0 && /Failed to load resource: .*404/.test(e) && skip--));
}

/** Opens `path` on the site and waits until every widget on it has built its DOM. */
export async function open(site, page, path = '/') {
  watch(page);
  await page.goto(new URL(path, site.url).href);
  if (!path.startsWith('/embed')) await mountAll(page);
  await page.waitForFunction(
    () => {
      const widgets = [...document.querySelectorAll('tally-memory-budget, tally-compute')];
      return widgets.length > 0 && widgets.every((w) => w.shadowRoot?.querySelector('.fields, .notice'));
    },
    null,
    { timeout: 15000 },
  );
}

/**
 * Opens `path` again in `page`, a page of site.newPage(): a new document in the same tab (nothing of the last one's
 * script state survives; the widgets keep no storage), with page.errors and the 404s cleared first, so what
 * errors() reports is this load's. The tab's caches are warm, so a test that checks many links pays the cold start
 * (a new context, the modules and the wasm compiled afresh) once rather than per link.
 */
export async function reopen(site, page, path = '/') {
  await inNewDocument(page, () => open(site, page, path));
}

/** page.goto(href) in a page already used, as reopen() does it: a new document, with its own errors and 404s. */
export async function gotoAgain(page, href) {
  await inNewDocument(page, () => page.goto(href));
}

/**
 * Runs `load()` (which navigates `page`) and checks that it made a new document; page.errors and the 404s are
 * cleared first, so they are the new document's.
 */
export async function inNewDocument(page, load) {
  await page.evaluate(() => (globalThis.__tallyStaleDocument = true));
  page.errors.length = 0;
  if (page.missing) page.missing.length = 0;
  await load();
  // A link that differs only in its #hash would stay in the same document: refused, not checked on stale state.
  if (await page.evaluate(() => globalThis.__tallyStaleDocument))
    throw new Error(`${page.url()}: the page was not loaded again`);
}

/**
 * Opens the page at `#hash` in `colorScheme`, waits until the page is ready and scrolls to the `tag` widget:
 * { page, widget }, with the page's uncaught exceptions in page.errors.
 */
export async function openSection(site, hash, tag, viewport, colorScheme = 'light') {
  const page = await site.browser.newPage({ viewport, colorScheme });
  page.errors = [];
  page.on('pageerror', (error) => page.errors.push(error.message));
  await page.goto(`${site.url}#${hash}`);
  await page.waitForFunction(() => document.documentElement.dataset.ready === 'true', null, { timeout: 20000 });
  await mountAll(page);
  const widget = page.locator(tag);
  await widget.scrollIntoViewIfNeeded();
  return { page, widget };
}

/** Sets a control inside a widget's shadow root the way a reader would (fill, select or check). */
export async function setControl(widget, name, value) {
  const control = widget.locator(`[name="${name}"]`);
  // A control folded behind a closed disclosure ("More settings") is opened the way a reader would.
  const summary = widget.locator(`details:not([open]):has([name="${name}"]) > summary`);
  if (await summary.count()) await summary.click();
  const tag = await control.evaluate((el) => (el.type === 'checkbox' ? 'checkbox' : el.tagName));
  if (tag === 'SELECT') await control.selectOption(String(value));
  else if (tag === 'checkbox') await control.setChecked(value === true || value === 'true');
  else await commit(control, value);
}

/**
 * Types `value` into a text field and leaves it (a change event, as on blur or Enter): errors about text
 * still being typed wait until the reader pauses or leaves the field (web/widgets/base.js showError).
 */
export async function commit(control, value) {
  await control.fill(String(value));
  await control.dispatchEvent('change');
}

/** The error text shown beside a field. */
export function fieldError(widget, name) {
  return widget.locator(`.field[data-field="${name}"] .error`).textContent();
}

/** Same display rounding as web/widgets/base.js formatBytes (decimal GB), for comparing page text with native numbers. */
export function gb(bytes, digits = 3) {
  const value = bytes / 1e9;
  if (value !== 0 && Math.abs(value) < 0.01)
    return `${Number((bytes / 1e6).toPrecision(digits)).toLocaleString('en-US')} MB`;
  return `${Number(value.toPrecision(digits)).toLocaleString('en-US', { maximumFractionDigits: 2 })} GB`;
}

/**
 * Opens a page holding only `<tag attributes>` and the one script tag a course page uses (served at a made-up
 * path of the test site); `head` is extra markup for the page's <head> (a host stylesheet). Returns the widget
 * locator once the widget is ready. `init` (a function) runs in the page before any script, e.g. to instrument
 * the engine loader.
 */
export async function openWidgetAlone(site, page, tag, attributes = '', { head = '', init = null, query = '' } = {}) {
  watch(page);
  if (init) await page.addInitScript(init);
  const file = `/alone-${tag}.html`;
  const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${tag}</title>${head}
<script type="module" src="/tally-widgets.js"></script></head><body><${tag} ${attributes}></${tag}></body></html>`;
  await page.route(`**${file}*`, (route) => route.fulfill({ contentType: 'text/html', body }));
  await page.goto(new URL(`${file}${query}`, site.url).href);
  await page.waitForFunction((name) => customElements.get(name), tag);
  const widget = page.locator(tag);
  await widget.evaluate((el) => el.ready);
  return widget;
}

/** An init script that wraps the Emscripten factory as tally.js defines it: every tally_call reaching wasm is
 *  recorded in window.__tallyCalls, and answers of window.__warnOn.method get its extra warning. */
export function wrapEngineCalls() {
  globalThis.__tallyCalls = [];
  let factory;
  Object.defineProperty(globalThis, 'createTallyModule', {
    configurable: true,
    get: () => factory,
    set(original) {
      factory = (options) =>
        Promise.resolve(original(options)).then((module) => {
          const call = module.tally_call;
          module.tally_call = (method, args) => {
            globalThis.__tallyCalls.push(method);
            const text = call(method, args);
            const rule = globalThis.__warnOn;
            if (!rule || rule.method !== method) return text;
            const envelope = JSON.parse(text);
            if (!envelope.ok) return text;
            envelope.result.warnings = [...(envelope.result.warnings ?? []), rule.warning];
            return JSON.stringify(envelope);
          };
          return module;
        });
    },
  });
}

/**
 * Mounts every widget on an index.html-like page and waits until each is wired: widgets off screen otherwise wait
 * until they come near the viewport (web/widgets/kit/mount.js), and a test reads or drives them wherever they are.
 */
export async function mountAll(page) {
  // The widget modules load after the first frame: wait until the page's widgets are upgraded and scheduled.
  await page.waitForFunction(
    () => {
      const all = [...document.querySelectorAll('*')].filter((el) => el.localName.startsWith('tally-'));
      const defined = all.filter((el) => customElements.get(el.localName));
      return defined.length > 0 && defined.every((w) => !w.ready || w.firstScreen);
    },
    null,
    { timeout: 20000 },
  );
  await page.evaluate(async () => {
    (await import(new URL('widgets/kit/mount.js', document.baseURI).href)).mountAll();
    const all = [...document.querySelectorAll('*')].filter((el) => el.localName.startsWith('tally-'));
    await Promise.all(all.map((w) => w.ready));
  });
}
